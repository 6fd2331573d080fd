"""Dictation: a recording reaches the household's transcription server and
its text comes back for the composer; too long or too large is refused before
anything is sent; a private chat's audio never goes to a cloud server; the
server's own reason for refusing a format is passed on in words."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from apps.chats.models import Chat
from apps.voice.selectors import NO_SERVER, PRIVATE_DICTATION, TRANSCRIPTION
from tests.fakes.audio import silent_wav, wav_bytes
from tests.voice.conftest import CLOUD_KEY, signed_in

pytestmark = pytest.mark.django_db

URL = "/voice/transcribe/"


def wav_upload(seconds: float, **kwargs) -> SimpleUploadedFile:
    return SimpleUploadedFile("dictation.wav", wav_bytes(seconds, **kwargs), "audio/wav")


def test_a_recording_comes_back_as_text_from_the_local_server(owner, audio, local_audio):
    response = signed_in(owner).post(URL, {"file": wav_upload(1.5), "seconds": "1.5"})

    assert response.status_code == 200
    assert response.json() == {"text": "Remind me to water the tomatoes on Sunday."}
    [sent] = audio.transcriptions
    assert sent["model"] == "whisper-1"
    assert sent["filename"] == "dictation.wav" and sent["content_type"] == "audio/wav"
    assert sent["seconds"] == pytest.approx(1.5)
    assert "Authorization" not in sent["headers"]  # a local server without a key gets none


def test_a_thirty_minute_recording_is_refused_before_anything_is_sent(owner, audio, local_audio):
    long = SimpleUploadedFile("talk.wav", silent_wav(30 * 60), "audio/wav")  # 14.4 MB

    response = signed_in(owner).post(URL, {"file": long, "seconds": "1800"})

    assert response.status_code == 413
    error = response.json()["error"]
    assert "dictation takes at most 3.8 MB (about 2 min)" in error
    assert "Nothing was sent" in error
    assert audio.requests == []


def test_a_recording_longer_than_the_limit_by_its_header_is_refused(
    owner, audio, local_audio, settings
):
    settings.VOICE_MAX_SECONDS = 5
    settings.VOICE_MAX_BYTES = 20_000_000  # the length decides, not the size
    minute = SimpleUploadedFile("talk.wav", silent_wav(60), "audio/wav")

    # The browser's own measure is not trusted over the file's header.
    response = signed_in(owner).post(URL, {"file": minute, "seconds": "4"})

    assert response.status_code == 413
    assert response.json()["error"].startswith(
        "The recording is 1 min long; dictation takes at most 5 s."
    )
    assert audio.requests == []


def test_another_format_over_the_limit_is_refused_by_the_length_the_browser_measured(
    owner, audio, local_audio
):
    webm = SimpleUploadedFile("talk.webm", b"\x1aE\xdf\xa3" + b"\0" * 2000, "audio/webm")

    response = signed_in(owner).post(URL, {"file": webm, "seconds": "1800"})

    assert response.status_code == 413
    assert "30 min long" in response.json()["error"]
    assert audio.requests == []


def test_a_format_the_server_rejects_says_the_servers_reason(owner, audio, local_audio):
    ogg = SimpleUploadedFile("talk.ogg", b"OggS" + b"\0" * 4000, "audio/ogg")

    response = signed_in(owner).post(URL, {"file": ogg, "seconds": "3"})

    assert response.status_code == 400
    assert response.json() == {
        "error": "The transcription server refused the audio: Unsupported format"
    }
    assert audio.transcriptions[0]["content_type"] == "audio/ogg"  # it was sent as it was


def test_a_private_chat_never_sends_audio_to_a_cloud_server(cloud_user, audio, cloud_audio):
    chat = Chat.objects.create(owner=cloud_user, private=True)

    response = signed_in(cloud_user).post(
        URL, {"file": wav_upload(1), "seconds": "1", "chat": chat.pk}
    )

    assert response.status_code == 400
    assert response.json() == {"error": PRIVATE_DICTATION}
    assert audio.requests == []


def test_a_private_chat_uses_the_local_server_when_there_is_one(
    cloud_user, audio, cloud_audio, local_audio
):
    chat = Chat.objects.create(owner=cloud_user, private=True)

    response = signed_in(cloud_user).post(
        URL, {"file": wav_upload(1), "seconds": "1", "chat": chat.pk}
    )

    assert response.status_code == 200
    assert "Authorization" not in audio.transcriptions[0]["headers"]  # not the cloud one


def test_an_ordinary_chat_may_use_a_cloud_server_with_its_key(cloud_user, audio, cloud_audio):
    chat = Chat.objects.create(owner=cloud_user)

    response = signed_in(cloud_user).post(
        URL, {"file": wav_upload(1), "seconds": "1", "chat": chat.pk}
    )

    assert response.status_code == 200
    assert audio.transcriptions[0]["headers"]["Authorization"] == f"Bearer {CLOUD_KEY}"


def test_a_person_who_may_not_use_cloud_models_is_not_sent_to_a_cloud_server(
    owner, audio, cloud_audio
):
    response = signed_in(owner).post(URL, {"file": wav_upload(1), "seconds": "1"})

    assert response.status_code == 400
    assert response.json() == {"error": NO_SERVER[TRANSCRIPTION]}
    assert audio.requests == []


def test_another_persons_chat_is_not_found(owner, member, audio, local_audio):
    chat = Chat.objects.create(owner=owner)

    response = signed_in(member).post(URL, {"file": wav_upload(1), "chat": chat.pk})

    assert response.status_code == 404
    assert audio.requests == []


def test_a_server_that_is_down_is_named(owner, audio, local_audio):
    audio.fail_with = (503, "model is loading")

    response = signed_in(owner).post(URL, {"file": wav_upload(1)})

    assert response.status_code == 502
    host = audio.base_url.removeprefix("http://")
    assert response.json()["error"] == (
        f"The transcription server at {host} failed (HTTP 503): model is loading"
    )


def test_an_unreachable_server_is_said_in_words(owner, audio, local_audio):
    audio.stop()

    response = signed_in(owner).post(URL, {"file": wav_upload(1)})

    assert response.status_code == 502
    assert response.json()["error"].startswith("The transcription server failed: could not reach")


def test_it_needs_the_csrf_token_a_post_and_a_signed_in_person(owner, audio, local_audio):
    strict = signed_in(owner, enforce_csrf_checks=True)
    assert strict.post(URL, {"file": wav_upload(1)}).status_code == 403
    assert signed_in(owner).get(URL).status_code == 405
    assert Client().post(URL, {"file": wav_upload(1)}).status_code == 302
    assert audio.requests == []


def test_an_empty_or_missing_recording_is_refused(owner, audio, local_audio):
    client = signed_in(owner)
    empty = SimpleUploadedFile("d.wav", b"", "audio/wav")
    assert client.post(URL, {"file": empty}).json()["error"].startswith("The recording is empty")
    assert client.post(URL, {"seconds": "2"}).json() == {
        "error": "No recording came with the request."
    }
    assert audio.requests == []
