"""Files attached to a message: kept in the person's uploads through the
library's add path, @-mentioned in that turn (its searches look in them),
pictures shown only to a model that accepts images, and never a local-only
picture to a cloud model. Bad input is refused with its reason and nothing
is lost or stored."""

from __future__ import annotations

import base64
import json
import struct
import threading
import time
import zlib

import pytest
from asgiref.sync import async_to_sync
from django.test import Client

from apps.chats import services
from apps.chats.attachments import NOT_YOURS, expand_images
from apps.chats.models import Chat, Message
from apps.chats.runner import reply_start
from apps.chats.setup import LOCAL_IMAGE
from apps.core.errors import Refused
from apps.library.models import Document, Source
from apps.library.services.adding import upload_add, uploads_source
from apps.library.services.documents import document_ingest
from apps.llm import ProviderError, provider_config_for, stream_chat
from tests.fakes.llm import Reply

pytestmark = pytest.mark.django_db(transaction=True)

NOTE = (
    "# Bike lock\n\nThe combination of the blue bike lock is 4-7-1-9. "
    "Grandma set it in June 2026.\n"
)


def png() -> bytes:
    """A real 2 by 2 PNG (red pixels)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data))
            + kind
            + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        )

    rows = b"".join(b"\x00" + b"\xff\x00\x00" * 2 for _ in range(2))
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def client_for(user, **options) -> Client:
    client = Client(**options)
    client.force_login(user)
    return client


def attach(client: Client, name: str, data: bytes, content_type: str = "text/markdown"):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return client.post(
        "/chat/attach/", {"files": [SimpleUploadedFile(name, data, content_type=content_type)]}
    )


def run(user, text: str, *, attachments, model: str = "", chat=None):
    chat, question, answer = services.turn_start(
        user=user, chat=chat, text=text, model_label=model, attachments=attachments
    )

    async def wait():
        await reply_start(answer.pk, chat.pk).task

    async_to_sync(wait)()
    answer.refresh_from_db()
    return chat, question, answer


@pytest.fixture
def vision_model(llm, transactional_db):
    from apps.instance.services import connection_create, model_add

    connection = connection_create(
        name="home", kind="openai", base_url=llm.base_url, location="local"
    )
    return model_add(
        connection=connection,
        model_id="llava",
        supports_tools=True,
        supports_vision=True,
        default=True,
    )


@pytest.fixture
def cloud_vision(llm, cloud_user, transactional_db):
    from apps.instance.services import connection_create, model_add

    connection = connection_create(
        name="cloud",
        kind="openai",
        base_url=llm.base_url,
        location="cloud",
        api_key="sk-cloud-secret-123456",
    )
    return model_add(connection=connection, model_id="gpt-eye", supports_vision=True)


def test_an_attached_note_goes_into_the_uploads_and_comes_back_as_a_chip(owner):
    response = attach(client_for(owner), "bike-lock.md", NOTE.encode())
    assert response.status_code == 200
    document = Document.objects.get(path="bike-lock.md")
    assert document.source == uploads_source(owner)
    assert document.status == Document.Status.READY  # indexed (the worker runs inline here)
    html = response.content.decode()
    assert f'name="attachment" value="{document.pk}"' in html
    assert "bike-lock.md" in html  # the name the person chose

    # The same file again is the same document, said plainly; nothing stored twice.
    again = attach(client_for(owner), "copy.md", NOTE.encode())
    assert again.status_code == 200
    assert "already in your library" in again.content.decode()
    assert f'value="{document.pk}"' in again.content.decode()
    assert Document.objects.count() == 1


def test_the_turn_mentions_the_attachment_and_its_search_finds_it(owner, local_model, llm):
    attach(client_for(owner), "bike-lock.md", NOTE.encode())
    document = Document.objects.get(path="bike-lock.md")
    assert document.title == "Bike lock"
    llm.queue(
        Reply(tool_calls=[("search_notes", json.dumps({"query": "bike lock combination"}))]),
        Reply(text="The blue lock opens with 4-7-1-9 [1]."),
    )
    chat, question, answer = run(owner, "What is the code of this lock?", attachments=[document.pk])
    assert question.mentions == [
        {"kind": "document", "id": document.pk, "label": document.title, "attachment": True}
    ]
    assert answer.status == Message.Status.DONE
    assert answer.text == "The blue lock opens with 4-7-1-9 [1]."
    assert [c["document_id"] for c in answer.citations] == [document.pk]
    assert "4-7-1-9" in json.dumps(llm.chat_requests[1].json["messages"])

    # The page shows the attachment on the person's message, linking to it,
    # and the export names it under the question.
    page = client_for(owner).get(f"/chat/{chat.pk}/").content.decode()
    assert f'href="/library/doc/{document.pk}/"' in page
    exported = client_for(owner).get(f"/chat/{chat.pk}/export/").content.decode()
    assert "## You\n\nWhat is the code of this lock?\n\nAttached: Bike lock" in exported


def test_the_reply_waits_for_an_attachment_still_being_indexed(owner, local_model, llm):
    """The worker may not have read the file yet when the question is sent:
    the reply says so and waits, and the search then finds the file."""
    document = upload_add(owner=owner, name="bike-lock.md", data=NOTE.encode()).document
    assert document.status == Document.Status.PENDING  # nothing indexed yet

    def worker():  # the Huey worker, late
        time.sleep(1.5)
        document_ingest(document=Document.objects.get(pk=document.pk))

    llm.queue(
        Reply(tool_calls=[("search_notes", json.dumps({"query": "bike lock combination"}))]),
        Reply(text="The blue lock opens with 4-7-1-9 [1]."),
    )
    thread = threading.Thread(target=worker)
    thread.start()
    _, _, answer = run(owner, "What is the lock's code?", attachments=[document.pk])
    thread.join()
    assert answer.status == Message.Status.DONE
    assert [c["document_id"] for c in answer.citations] == [document.pk]
    assert "4-7-1-9" in json.dumps(llm.chat_requests[1].json["messages"])


def test_someone_elses_upload_refuses_the_send_and_writes_nothing(owner, member, local_model):
    attach(client_for(member), "their.md", NOTE.encode())
    theirs = Document.objects.get(path="their.md")
    client = client_for(owner)
    response = client.post(
        "/chat/send/", {"text": "read this", "attachment": str(theirs.pk)}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 400
    assert NOT_YOURS in response.content.decode()
    assert not Chat.objects.filter(owner=owner).exists()
    assert not Message.objects.exists()
    # A vault note of one's own is not an attachment either.
    with pytest.raises(Refused):
        services.turn_start(user=member, chat=None, text="x", attachments=[theirs.pk + 1000])


def test_bad_files_are_refused_with_their_reason_and_nothing_is_stored(owner, settings):
    client = client_for(owner)
    program = attach(client, "tool.exe", b"MZ\x90\x00" + b"\x00" * 200, "application/octet-stream")
    assert program.status_code == 400
    assert "tool.exe" in program.content.decode()
    assert 'data-testid="attach-error"' in program.content.decode()

    settings.UPLOAD_MAX_MB = 1
    big = attach(client, "big.md", b"a" * (1024 * 1024 + 1))
    assert big.status_code == 400
    assert "larger than the 1 MB limit" in big.content.decode()

    nothing = client.post("/chat/attach/", {})
    assert nothing.status_code == 400
    assert "Choose a file" in nothing.content.decode()
    assert not Document.objects.exists()


def test_attaching_needs_the_csrf_token(owner):
    from django.core.files.uploadedfile import SimpleUploadedFile

    client = client_for(owner, enforce_csrf_checks=True)
    response = client.post(
        "/chat/attach/", {"files": [SimpleUploadedFile("bike-lock.md", NOTE.encode())]}
    )
    assert response.status_code == 403
    assert not Document.objects.exists()


def test_a_vision_model_gets_the_picture_in_that_turn_only(owner, vision_model, llm):
    attach(client_for(owner), "lock.png", png(), "image/png")
    picture = Document.objects.get(path="lock.png")
    assert picture.kind == Document.Kind.IMAGE
    llm.queue(Reply(text="A red square."), Reply(text="Still red."))
    chat, _, answer = run(owner, "What colour is it?", attachments=[picture.pk])
    assert answer.status == Message.Status.DONE, answer.text
    content = llm.chat_requests[0].json["messages"][-1]["content"]
    images = [part for part in content if part.get("type") == "image_url"]
    assert images == [
        {"image_url": {"url": "data:image/png;base64," + base64.b64encode(png()).decode()}}
        | {"type": "image_url"}
    ]
    # The next message does not send the picture again; it is named instead.
    run(owner, "And now?", attachments=[], chat=chat)
    later = json.dumps(llm.chat_requests[1].json["messages"])
    assert "image_url" not in later and f"Attached image: {picture.title}" in later


def test_a_model_without_vision_gets_no_picture(owner, local_model, llm):
    attach(client_for(owner), "lock.png", png(), "image/png")
    picture = Document.objects.get(path="lock.png")
    llm.queue(Reply(text="I cannot see it."))
    run(owner, "What colour is it?", attachments=[picture.pk])
    sent = json.dumps(llm.chat_requests[0].json["messages"])
    assert "image_url" not in sent and "cannot see images" in sent


def test_a_local_only_picture_never_goes_to_a_cloud_model(cloud_user, cloud_vision, llm):
    source = uploads_source(cloud_user)
    source.cloud = Source.Cloud.LOCAL_ONLY
    source.save()
    attach(client_for(cloud_user), "lock.png", png(), "image/png")
    picture = Document.objects.get(path="lock.png")
    llm.queue(Reply(text="should never be asked"))
    _, _, answer = run(cloud_user, "What is it?", attachments=[picture.pk], model="cloud:gpt-eye")
    assert answer.status == Message.Status.ERROR
    assert LOCAL_IMAGE in answer.text
    assert llm.chat_requests == []


def test_stream_chat_refuses_a_private_chats_picture_on_a_cloud_model(
    cloud_user, cloud_vision, llm
):
    """The last guard holds on its own: a picture in a private chat is
    local-only, and apps.llm.stream_chat refuses it before any request."""
    attach(client_for(cloud_user), "lock.png", png(), "image/png")
    picture = Document.objects.get(path="lock.png")
    chat, question, _ = services.turn_start(
        user=cloud_user, chat=None, text="What is it?", attachments=[picture.pk]
    )
    chat.private = True
    turns = expand_images(question.turns, chat=chat, vision=True)
    assert turns[0]["blocks"][1]["local_only"] is True

    async def consume():
        async for _ in stream_chat(
            provider_config_for(cloud_vision), system="", turns=turns, tools=[]
        ):
            pass

    with pytest.raises(ProviderError, match="local-only"):
        async_to_sync(consume)()
    assert llm.chat_requests == []
