"""The chat page offers voice only where it can work: the Dictate button and
the script for a person with a transcription or speech server they may use,
none for anyone else; a private chat whose only server is a cloud one shows
the button off, with the reason. The page lets this origin use the microphone."""

from __future__ import annotations

import pytest

from apps.chats.models import Chat
from apps.voice.selectors import PRIVATE_DICTATION
from tests.voice.conftest import audio_connection, make_reply, signed_in

pytestmark = pytest.mark.django_db


def page(user, chat=None) -> str:
    response = signed_in(user).get(f"/chat/{chat.pk}/" if chat else "/chat/")
    assert response.status_code == 200
    return response.content.decode()


def test_without_an_audio_server_there_is_no_mic_button(owner):
    html = page(owner)
    assert "data-voice-dictate" not in html and "js/voice.js" not in html


def test_with_a_local_server_the_composer_has_the_dictate_button(owner, local_audio):
    chat = Chat.objects.create(owner=owner)

    html = page(owner, chat)

    assert 'data-testid="dictate"' in html and "js/voice.js" in html
    assert f'data-chat="{chat.pk}"' in html and 'data-max-seconds="120"' in html
    assert '<meta name="jarvis-voice-speak" content="on">' in html


def test_a_cloud_only_server_is_no_server_for_someone_without_the_cloud_permission(
    owner, cloud_audio
):
    assert "data-voice-dictate" not in page(owner)


def test_a_private_chat_with_only_a_cloud_server_says_why_dictation_is_off(cloud_user, cloud_audio):
    chat = Chat.objects.create(owner=cloud_user, private=True)

    html = page(cloud_user, chat)

    assert 'data-testid="dictate"' in html
    assert "disabled" in html.split('data-testid="dictate"')[1].split(">")[0]
    assert PRIVATE_DICTATION in html
    assert '<meta name="jarvis-voice-speak" content="off"' in html


def test_replies_carry_a_read_aloud_button_for_the_script(owner, local_audio):
    reply = make_reply(owner, "The valve was replaced.")

    html = page(owner, reply.chat)

    assert f'data-voice-speak="/voice/speak/{reply.pk}/"' in html


def test_speech_only_shows_no_dictate_button_but_loads_the_script(owner, audio):
    audio_connection(audio, name="tts-home", location="local", transcription_model="")

    html = page(owner)

    assert "data-voice-dictate" not in html and "js/voice.js" in html


def test_the_page_may_use_the_microphone_of_its_own_origin_only(owner, local_audio):
    response = signed_in(owner).get("/chat/")
    assert "microphone=(self)" in response["Permissions-Policy"]
    assert "camera=()" in response["Permissions-Policy"]
