"""Which audio endpoint a person's dictation or read-aloud goes to, routed as
chat is: only connections they may use (a cloud one needs the "use cloud
models" permission), local ones first, and only a local one for a private
chat or a reply that cited local-only notes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from apps.chats.models import Message
from apps.chats.selectors import chats_for
from apps.core.errors import Refused
from apps.instance.models import Connection
from apps.library.models import Chunk, Source
from apps.llm.selectors import may_use_cloud

if TYPE_CHECKING:
    from apps.accounts.models import User
    from apps.chats.models import Chat

TRANSCRIPTION = "transcription"
SPEECH = "speech"
_FIELDS = {TRANSCRIPTION: "transcription_model", SPEECH: "speech_model"}

NO_SERVER = {
    TRANSCRIPTION: "No transcription server is set up for you. An admin adds one as a "
    "connection with a transcription model.",
    SPEECH: "No speech server is set up for you. An admin adds one as a connection with "
    "a speech model.",
}
PRIVATE_DICTATION = (
    "This chat is private (it has read local-only notes), so its audio never goes to a "
    "cloud transcription server, and no local one is set up."
)
PRIVATE_SPEECH = (
    "This chat is private (it has read local-only notes), so its replies are never sent "
    "to a cloud speech server, and no local one is set up."
)
LOCAL_ONLY_SPEECH = (
    "This reply cites notes kept local-only, so it is never sent to a cloud speech "
    "server, and no local one is set up."
)


def audio_connections_for(*, user: User, purpose: str) -> list[Connection]:
    """The connections `user` may send audio work of `purpose` to, local first."""
    if not getattr(user, "is_active", False) or not user.is_authenticated:
        return []
    rows: QuerySet[Connection] = Connection.objects.filter(
        enabled=True, kind=Connection.Kind.OPENAI
    ).exclude(**{_FIELDS[purpose]: ""})
    if not may_use_cloud(user=user):
        # Only an explicit "local" counts: anything else is treated as cloud.
        rows = rows.filter(location=Connection.Location.LOCAL)
    return sorted(rows, key=lambda c: (c.is_cloud, c.name.lower()))


def audio_connection_for(
    *, user: User, purpose: str, local_only: bool, why: str = ""
) -> Connection:
    """The endpoint to use, or Refused with the reason: none set up for them,
    or (local_only) none that keeps the audio or text at home (`why` says
    what made it local-only)."""
    candidates = audio_connections_for(user=user, purpose=purpose)
    if not candidates:
        raise Refused(NO_SERVER[purpose])
    if local_only:
        candidates = [c for c in candidates if not c.is_cloud]
        if not candidates:
            raise Refused(why)
    return candidates[0]


def reply_for(*, user: User, pk: int) -> Message:
    """One of the person's own replies (another person's: 404)."""
    return get_object_or_404(
        Message.objects.select_related("chat").filter(
            chat__in=chats_for(user=user), role=Message.Role.ASSISTANT
        ),
        pk=pk,
    )


def cites_local_only(*, reply: Message) -> bool:
    """Does the reply cite a passage that may not reach a cloud model, as the
    library says now (a private folder or section, a local-only collection)?
    A cited passage that is gone counts as local-only: fail closed."""
    chunk_ids = {c.get("chunk_id") for c in reply.citations if isinstance(c, dict)}
    chunk_ids.discard(None)
    if not chunk_ids:
        return False
    chunks = list(Chunk.objects.filter(pk__in=chunk_ids).select_related("document__source"))
    if len(chunks) < len(chunk_ids):
        return True
    return any(c.owner_only or c.document.source.cloud != Source.Cloud.ALLOWED for c in chunks)


def speech_route_for(*, user: User, reply: Message) -> Connection:
    """Where `reply` may be read aloud: only a local server for a private chat
    or a reply citing local-only notes."""
    if reply.chat.private:
        return audio_connection_for(user=user, purpose=SPEECH, local_only=True, why=PRIVATE_SPEECH)
    if cites_local_only(reply=reply):
        return audio_connection_for(
            user=user, purpose=SPEECH, local_only=True, why=LOCAL_ONLY_SPEECH
        )
    return audio_connection_for(user=user, purpose=SPEECH, local_only=False)


def dictation_route_for(*, user: User, chat: Chat | None) -> Connection:
    """Where a dictation for `chat` (None: a new chat) may be transcribed."""
    private = chat is not None and chat.private
    return audio_connection_for(
        user=user, purpose=TRANSCRIPTION, local_only=private, why=PRIVATE_DICTATION
    )
