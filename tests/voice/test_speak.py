"""Read aloud: a finished reply of one's own goes to the speech server as
plain words and its audio comes back; routing as for chat (a private chat, or
a reply citing local-only notes, only ever reaches a local server); another
person's reply does not exist."""

from __future__ import annotations

import pytest

from apps.library.models import Source
from apps.voice.selectors import LOCAL_ONLY_SPEECH, PRIVATE_SPEECH
from apps.voice.services import speech_text
from tests.voice.conftest import cited_chunk, make_reply, signed_in

pytestmark = pytest.mark.django_db

ANSWER = "## Boiler\n\nThe **valve** was replaced in [October](https://example.org/x) [1].\n\n- Checked by *Max*"


def speak(user, reply):
    return signed_in(user).post(f"/voice/speak/{reply.pk}/")


def test_a_reply_is_read_aloud_as_plain_words(owner, audio, local_audio):
    reply = make_reply(owner, ANSWER)

    response = speak(owner, reply)

    assert response.status_code == 200
    assert response["Content-Type"] == "audio/wav"
    assert response.content == audio.speech
    assert response["Cache-Control"] == "no-store" and response["X-Voice-Cut"] == "0"
    [sent] = audio.speeches
    assert sent["json"] == {
        "model": "tts-1",
        "input": "Boiler The valve was replaced in October. Checked by Max",
        "voice": "alloy",
        "response_format": "mp3",
    }


def test_another_persons_reply_is_not_found(owner, member, audio, local_audio):
    reply = make_reply(owner, ANSWER)

    assert speak(member, reply).status_code == 404
    assert signed_in(owner).post("/voice/speak/999999/").status_code == 404
    assert audio.requests == []


def test_a_private_chats_reply_never_goes_to_a_cloud_server(cloud_user, audio, cloud_audio):
    reply = make_reply(cloud_user, ANSWER, private=True)

    response = speak(cloud_user, reply)

    assert response.status_code == 400
    assert response.json() == {"error": PRIVATE_SPEECH}
    assert audio.requests == []


def test_a_reply_citing_local_only_notes_never_goes_to_a_cloud_server(
    cloud_user, audio, cloud_audio
):
    local_only = cited_chunk(cloud_user, cloud=Source.Cloud.LOCAL_ONLY)
    reply = make_reply(cloud_user, ANSWER, citations=[local_only])

    response = speak(cloud_user, reply)

    assert response.status_code == 400
    assert response.json() == {"error": LOCAL_ONLY_SPEECH}
    assert audio.requests == []


def test_a_reply_citing_cloud_allowed_notes_may_use_the_cloud_server(
    cloud_user, audio, cloud_audio
):
    allowed = cited_chunk(cloud_user, cloud=Source.Cloud.ALLOWED)
    reply = make_reply(cloud_user, ANSWER, citations=[allowed])

    response = speak(cloud_user, reply)

    assert response.status_code == 200
    assert audio.speeches[0]["json"]["voice"] == "nova"  # the cloud connection's voice


def test_a_cited_passage_that_is_gone_counts_as_local_only(cloud_user, audio, cloud_audio):
    reply = make_reply(cloud_user, ANSWER, citations=[{"n": 1, "chunk_id": 987654}])

    assert speak(cloud_user, reply).json() == {"error": LOCAL_ONLY_SPEECH}
    assert audio.requests == []


def test_a_private_chat_is_read_by_the_local_server(cloud_user, audio, cloud_audio, local_audio):
    reply = make_reply(cloud_user, ANSWER, private=True)

    assert speak(cloud_user, reply).status_code == 200
    assert audio.speeches[0]["json"]["voice"] == "alloy"  # the local connection's (default) voice


def test_a_reply_still_being_written_is_not_read(owner, audio, local_audio):
    reply = make_reply(owner, "The valve", status="streaming")

    response = speak(owner, reply)

    assert response.status_code == 409
    assert "still being written" in response.json()["error"]
    assert audio.requests == []


def test_the_speech_servers_reason_is_passed_on(owner, audio, local_audio):
    audio.fail_with = (400, "voice 'alloy' not found")

    response = speak(owner, make_reply(owner, ANSWER))

    assert response.status_code == 400
    assert response.json() == {
        "error": "The speech server refused the text: voice 'alloy' not found"
    }


def test_it_needs_the_csrf_token(owner, audio, local_audio):
    reply = make_reply(owner, ANSWER)

    assert (
        signed_in(owner, enforce_csrf_checks=True).post(f"/voice/speak/{reply.pk}/").status_code
        == 403
    )
    assert signed_in(owner).get(f"/voice/speak/{reply.pk}/").status_code == 405
    assert audio.requests == []


def test_a_long_reply_is_cut_at_a_sentence_end():
    text = " ".join(f"Sentence number {i} is here." for i in range(400))

    spoken, cut = speech_text(text, 4096)

    assert cut and len(spoken) <= 4096 and spoken.endswith("is here.")
    assert speech_text("```python\nprint(1)\n```\nDone.", 100) == ("(code) Done.", False)
