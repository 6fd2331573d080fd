"""Voice fixtures: the fake audio server (tests/fakes/audio.py) registered as a
local or a cloud connection, a person allowed cloud models, and a chat with a
finished reply to read aloud."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, Permission

from apps.accounts import permissions
from apps.chats.models import Chat, Message
from apps.instance.models import Connection
from apps.library.models import Chunk, Document, Source
from tests.fakes.audio import FakeAudio
from tests.support.fixtures import signed_in  # noqa: F401 (this folder's tests import it from here)

CLOUD_KEY = "sk-audio-cloud-secret-98765"


@pytest.fixture
def audio():
    with FakeAudio() as fake:
        yield fake


def audio_connection(fake: FakeAudio, *, name: str, location: str, **fields) -> Connection:
    """A connection to the fake with both audio models set (unless `fields` say otherwise)."""
    from apps.instance.services import connection_create  # after the db fixture is up

    connection = connection_create(
        name=name,
        kind="openai",
        base_url=fake.api_base,
        location=location,
        api_key=CLOUD_KEY if location == "cloud" else "",
    )
    for field, value in {
        "transcription_model": "whisper-1",
        "speech_model": "tts-1",
        **fields,
    }.items():
        setattr(connection, field, value)
    connection.full_clean()
    connection.save()
    return connection


@pytest.fixture
def local_audio(audio, db) -> Connection:
    return audio_connection(audio, name="whisper-home", location="local")


@pytest.fixture
def cloud_audio(audio, db) -> Connection:
    return audio_connection(audio, name="openai-audio", location="cloud", speech_voice="nova")


@pytest.fixture
def cloud_user(owner):
    group = Group.objects.create(name="cloud users")
    group.permissions.add(
        Permission.objects.get(codename=permissions.codename(permissions.USE_CLOUD_MODELS))
    )
    owner.groups.add(group)
    return type(owner).objects.get(pk=owner.pk)


def make_reply(owner, text: str, *, private: bool = False, citations=(), status="done") -> Message:
    chat = Chat.objects.create(owner=owner, title="Boiler", private=private)
    question = Message.objects.create(chat=chat, role=Message.Role.USER, text="When?")
    return Message.objects.create(
        chat=chat,
        parent=question,
        role=Message.Role.ASSISTANT,
        status=status,
        text=text,
        citations=list(citations),
    )


def cited_chunk(owner, *, cloud: str) -> dict:
    """A citation of a passage in a collection with the given cloud policy."""
    source = Source.objects.create(
        owner=owner, name=f"notes {cloud}", kind=Source.Kind.UPLOADS, cloud=cloud
    )
    document = Document.objects.create(
        source=source,
        path="boiler.md",
        title="Boiler",
        content_hash="1" * 64,
        status=Document.Status.READY,
    )
    chunk = Chunk.objects.create(
        document=document, ordinal=0, text="Valve replaced.", text_hash="h"
    )
    return {"n": 1, "document_id": document.pk, "chunk_id": chunk.pk, "title": "Boiler"}
