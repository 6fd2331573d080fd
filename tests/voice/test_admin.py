"""An admin marks a connection for dictation and reading aloud in the
connection's own admin page (its "Voice" section); an Anthropic connection,
which has no audio routes, is refused with the reason."""

from __future__ import annotations

import pytest

from apps.instance.models import Connection

pytestmark = pytest.mark.django_db

ADD = "/admin/instance/connection/add/"


def form(**fields) -> dict:
    return {
        "name": "whisper-home",
        "kind": "openai",
        "base_url": "http://192.168.1.20:8000/v1",
        "location": "",
        "enabled": "on",
        "request_options": "{}",
        "models-TOTAL_FORMS": "0",
        "models-INITIAL_FORMS": "0",
        **fields,
    }


def test_the_connection_page_has_a_voice_section(admin_client):
    html = admin_client.get(ADD).content.decode()
    assert "Voice" in html and 'name="transcription_model"' in html
    assert 'name="speech_model"' in html and 'name="speech_voice"' in html


def test_an_admin_marks_a_connection_for_transcription_and_speech(admin_client):
    response = admin_client.post(
        ADD, form(transcription_model=" Systran/faster-whisper-small ", speech_model="kokoro")
    )

    assert response.status_code == 302
    connection = Connection.objects.get(name="whisper-home")
    assert connection.transcription_model == "Systran/faster-whisper-small"
    assert connection.speech_model == "kokoro" and connection.speech_voice == ""
    assert not connection.is_cloud  # a home-network address: local, as for chat


def test_an_anthropic_connection_cannot_be_marked_for_audio(admin_client):
    response = admin_client.post(
        ADD,
        form(
            name="claude",
            kind="anthropic",
            base_url="https://api.anthropic.com",
            transcription_model="whisper-1",
        ),
    )

    assert response.status_code == 200
    assert "Dictation and reading aloud need an OpenAI-compatible connection." in (
        response.content.decode()
    )
    assert not Connection.objects.filter(name="claude").exists()
