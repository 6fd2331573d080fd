"""Files attached to a message in the composer.

An attachment is an upload like any other: it goes into the person's Uploads
collection through the library's add path (`upload_add`: typed by its bytes,
size-limited, deduplicated, then `ingest_queue`) and is indexed by the worker. The message that
carries it @-mentions it, so that turn's searches look in it first (see
apps.chats.tools.library `_scope`), and the reply waits (a little) for it to
be indexed before the model is asked.

An attached image also goes to the model itself as a picture, but only to a
model that accepts images (ModelEntry.supports_vision) and only in the turn
it was attached to. The picture carries `local_only` as the library sees it
now (a private chat, a collection not allowed to go to cloud models, a
private folder), so apps.llm.stream_chat refuses to send a local-only one to
a cloud model whatever happens on the way.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass

from apps.chats.models import Chat
from apps.core.errors import Refused
from apps.library.formats import image_media_type
from apps.library.models import Document, Source
from apps.library.services import read_original, upload_add, upload_refusal
from apps.library.tasks import ingest_queue

MAX_PER_MESSAGE = 10
# A stored reference to an attached picture in the question's turn: the bytes
# are read (and their privacy judged) when a turn is set up, never stored twice.
ATTACHED_IMAGE = "attached_image"
# The pictures model APIs take (the library's table of image signatures
# tells them apart); TIFF, HEIC… are sent as their indexed text only.
MODEL_IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
NOT_YOURS = "that attachment is not one of your uploads: attach the file again"
NOT_SEEN = "(This model cannot see images; it has the picture's indexed text only.)"


@dataclass
class Attached:
    """One file's outcome: the document it became (or already was), or why not."""

    name: str
    document: Document | None = None
    error: str = ""
    already: bool = False  # the same bytes were already in the person's uploads


def attachment_add(*, user, name: str, data: bytes) -> Attached:
    """Keep one attached file in `user`'s uploads and queue its indexing. The
    same file attached twice is the same document (nothing stored again)."""
    added = upload_add(owner=user, name=name, data=data)
    if added.document is not None:
        # No toast when it is ready: the reply that waits for it says so.
        ingest_queue(added.document, notify=False)
        return Attached(name=added.name, document=added.document)
    if added.existing:
        return Attached(name=added.name, document=added.existing[0], already=True)
    return Attached(name=added.name or name, error=added.error)


def too_large(size: int) -> str:
    """The refusal for a file of `size` bytes, or "" (checked before reading
    it): the library's upload limit, the same as the add page's."""
    return upload_refusal(size)


def attachments_of(user, ids: list[int]) -> list[Document]:
    """The documents `ids` name, each one of `user`'s own uploads; any other
    id (someone else's upload, a vault note, a removed file) is refused."""
    if len(ids) > MAX_PER_MESSAGE:
        raise Refused(f"attach at most {MAX_PER_MESSAGE} files to one message")
    documents = {
        d.pk: d
        for d in Document.objects.filter(
            pk__in=ids, source__owner=user, source__kind=Source.Kind.UPLOADS
        )
    }
    if len(documents) != len(set(ids)):
        raise Refused(NOT_YOURS)
    return [documents[pk] for pk in dict.fromkeys(ids)]


def mentions_and_blocks(documents: list[Document]) -> tuple[list[dict], list[dict]]:
    """What a message with these attachments stores: a mention of each (the
    turn's searches look in it) and a reference block per image."""
    mentions = [
        {"kind": "document", "id": d.pk, "label": d.title, "attachment": True} for d in documents
    ]
    blocks = [
        {"type": ATTACHED_IMAGE, "document_id": d.pk, "name": d.title}
        for d in documents
        if d.kind == Document.Kind.IMAGE
    ]
    return mentions, blocks


def attachment_ids(mentions: list[dict] | None) -> list[int]:
    return [m["id"] for m in mentions or [] if m.get("attachment")]


def _media_type(data: bytes) -> str | None:
    media_type = image_media_type(data[:16])
    return media_type if media_type in MODEL_IMAGE_TYPES else None


def _local_only(document: Document, chat: Chat) -> bool:
    return chat.private or document.in_private_dir or document.source.cloud != Source.Cloud.ALLOWED


def expand_images(turns: list[dict], *, chat: Chat, vision: bool) -> list[dict]:
    """The question's turns as a model gets them: each attached-image
    reference becomes the picture (a vision model) or a line saying the
    model cannot see it (text blocks of a turn are sent joined, hence the
    blank line before each such line). A picture that cannot be read or is of a format
    model APIs do not take becomes a line too."""
    refs = [b for t in turns for b in t.get("blocks") or [] if b.get("type") == ATTACHED_IMAGE]
    if not refs:
        return turns
    documents = Document.objects.select_related("source").in_bulk([b["document_id"] for b in refs])
    expanded = []
    for turn in turns:
        blocks = []
        for block in turn.get("blocks") or []:
            if block.get("type") != ATTACHED_IMAGE:
                blocks.append(block)
                continue
            blocks.append(_picture(block, documents.get(block["document_id"]), chat, vision))
        expanded.append({**turn, "blocks": blocks})
    return expanded


def _picture(block: dict, document: Document | None, chat: Chat, vision: bool) -> dict:
    name = block.get("name") or "image"
    if document is None or document.source.owner_id != chat.owner_id:
        return {"type": "text", "text": f"\n\n(The attached image {name} has been removed.)"}
    if not vision:
        return {"type": "text", "text": f"\n\n(Attached image: {name}. {NOT_SEEN})"}
    try:
        data = read_original(document)
    except (OSError, Refused):  # gone from the data dir, or a path that leaves it
        data = b""
    media_type = _media_type(data)
    if media_type is None:
        unseen = f"\n\n(Attached image: {name}, in a format models cannot see.)"
        return {"type": "text", "text": unseen}
    return {
        "type": "image",
        "media_type": media_type,
        "data": base64.b64encode(data).decode("ascii"),
        "local_only": _local_only(document, chat),
    }


def without_images(turns: list[dict]) -> list[dict]:
    """Earlier turns: an image attached to an earlier message is named, not
    sent again (pictures go with the turn they were attached to)."""
    out = []
    for turn in turns:
        blocks = [
            {"type": "text", "text": f"\n\n(Attached image: {b.get('name') or 'image'}.)"}
            if b.get("type") == ATTACHED_IMAGE
            else b
            for b in turn.get("blocks") or []
        ]
        out.append({**turn, "blocks": blocks})
    return out


def pending_attachments(ids: list[int]) -> int:
    """How many of the documents `ids` are still waiting to be indexed."""
    return Document.objects.filter(
        pk__in=ids, status__in=[Document.Status.PENDING, Document.Status.PARSING]
    ).count()
