"""End to end: voice in real Chromium against a real daphne and the fake
audio server (tests/fakes/audio.py).

Chromium's fake microphone (`--use-fake-device-for-media-stream`, a beeping
tone, allowed without a prompt by `--use-fake-ui-for-media-stream`) is
recorded by the page's MediaRecorder, turned into WAV by static/js/voice.js
and transcribed; the text lands in the message box, unsent. This module's
daphne allows 2 seconds of dictation, so the limit is seen to stop a
recording nobody stops. "Read aloud" posts the reply and plays what comes back.
"""

from __future__ import annotations

import time

import pytest

from apps.chats.models import Message
from tests.e2e.conftest import CHROMIUM_ARGS, chromium_path, screenshot
from tests.fakes.audio import FakeAudio, wav_bytes
from tests.fakes.llm import FakeOpenAI, Reply
from tests.support.browser import collect_errors, sign_in
from tests.voice.conftest import audio_connection, make_reply

pytestmark = pytest.mark.e2e

MAX_SECONDS = 2
FAKE_MICROPHONE = ["--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream"]


@pytest.fixture(scope="module")
def browser(django_db_setup):
    # This module's own browser: the shared one has no fake microphone.
    from playwright.sync_api import sync_playwright  # its loop lives only as long as the module

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium_path(), args=[*CHROMIUM_ARGS, *FAKE_MICROPHONE]
        )
        yield browser
        browser.close()


@pytest.fixture
def page(browser, live_server_url):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    context.grant_permissions(["microphone"], origin=live_server_url)
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


@pytest.fixture(scope="module")
def module_daphne(django_db_setup):
    from tests.support.processes import daphne_server  # as tests/e2e/conftest.py starts it

    with daphne_server(JARVIS_VOICE_MAX_SECONDS=str(MAX_SECONDS)) as url:
        yield url


@pytest.fixture
def audio(live_server_url):
    with FakeAudio() as fake:
        audio_connection(fake, name="whisper-home", location="local")
        yield fake


@pytest.fixture
def model_server(live_server_url):
    """The fake model as the household's local chat model, for a reply that streams in."""
    from apps.instance.services import connection_create, model_add  # once the db is up

    with FakeOpenAI() as fake:
        connection = connection_create(
            name="home", kind="openai", base_url=fake.base_url, location="local"
        )
        model_add(connection=connection, model_id="local-7b", supports_tools=True, default=True)
        yield fake


def real(errors: list[str]) -> list[str]:
    # A refused request is logged by the browser as a failed resource: that is the point.
    return [e for e in errors if "Failed to load resource" not in e]


def test_dictation_puts_the_words_into_the_message_box(page, live_server_url, owner, audio):
    errors = collect_errors(page)
    sign_in(page, live_server_url)
    box = page.locator("#composer-text")
    box.fill("Note:")
    dictate = page.get_by_test_id("dictate")

    dictate.click()
    page.wait_for_selector("[data-voice-dictate][aria-pressed=true]")
    assert "Recording" in page.get_by_test_id("dictate-status").inner_text()
    time.sleep(1)
    dictate.click()

    page.wait_for_function(
        "() => document.getElementById('composer-text').value.includes('tomatoes')"
    )
    assert box.input_value() == "Note: Remind me to water the tomatoes on Sunday."
    assert "Added to the message box" in page.get_by_test_id("dictate-status").inner_text()
    [sent] = audio.transcriptions
    assert sent["content_type"] == "audio/wav" and sent["model"] == "whisper-1"
    assert 0.3 < sent["seconds"] < MAX_SECONDS + 0.1
    assert Message.objects.count() == 0  # inserted, not sent
    screenshot(page, "voice-dictation")
    assert real(errors) == []


def test_a_recording_nobody_stops_ends_at_the_limit(page, live_server_url, owner, audio):
    sign_in(page, live_server_url)

    page.get_by_test_id("dictate").click()

    page.wait_for_function(
        "() => document.getElementById('composer-text').value.includes('tomatoes')",
        timeout=MAX_SECONDS * 1000 + 15_000,
    )
    status = page.get_by_test_id("dictate-status").inner_text()
    assert "Added to the message box" in status
    assert audio.transcriptions[0]["seconds"] <= MAX_SECONDS + 0.05


def test_a_format_the_server_rejects_is_said_beside_the_button(page, live_server_url, owner, audio):
    audio.fail_with = (400, "Unsupported format")
    sign_in(page, live_server_url)

    page.get_by_test_id("dictate").click()
    page.wait_for_selector("[data-voice-dictate][aria-pressed=true]")
    page.get_by_test_id("dictate").click()

    status = page.get_by_test_id("dictate-status")
    status.filter(has_text="refused").wait_for()
    assert status.inner_text() == "The transcription server refused the audio: Unsupported format"
    assert page.locator("#composer-text").input_value() == ""


def test_read_aloud_plays_the_reply(page, live_server_url, owner, audio):
    errors = collect_errors(page)
    audio.speech = wav_bytes(4, rate=24_000)  # long enough to be seen playing
    reply = make_reply(owner, "The **valve** was replaced in October [1].")
    sign_in(page, live_server_url)
    page.goto(f"{live_server_url}/chat/{reply.chat_id}/")
    button = page.get_by_test_id("read-aloud")
    button.wait_for(state="visible")  # shown by the script: the reply is finished

    button.click()

    page.wait_for_selector("[data-voice-speak][data-state=playing]")
    assert button.inner_text() == "Stop reading"
    assert float(button.get_attribute("data-seconds")) == pytest.approx(4, abs=0.1)
    assert audio.speeches[0]["json"]["input"] == "The valve was replaced in October."
    button.click()
    page.wait_for_function("() => !document.querySelector('[data-voice-speak]').dataset.state")
    assert button.inner_text() == "Read aloud"
    screenshot(page, "voice-read-aloud")
    assert real(errors) == []


def test_a_streamed_reply_offers_read_aloud_once_it_is_finished(
    page, live_server_url, owner, audio, model_server
):
    errors = collect_errors(page)
    model_server.queue(Reply(text="The valve was replaced in October.", chunk_chars=4, delay=0.15))
    sign_in(page, live_server_url)
    page.fill("#composer-text", "When was the valve replaced?")
    page.click("[data-testid=send]")
    # The first search of this daphne loads the embedder: slower on a busy machine.
    page.wait_for_url(f"{live_server_url}/chat/*/", timeout=45_000)
    button = page.get_by_test_id("read-aloud")
    assert not button.is_visible()  # still being written

    page.wait_for_selector("[data-testid=reply] .msg__status[data-status=done]", timeout=30_000)
    button.wait_for(state="visible")
    button.click()
    page.wait_for_selector("[data-voice-speak][data-state]:not([data-state=loading])")
    assert audio.speeches[0]["json"]["input"] == "The valve was replaced in October."
    assert real(errors) == []


def test_no_audio_server_no_mic_and_no_read_aloud(page, live_server_url, owner):
    reply = make_reply(owner, "The valve was replaced.")
    sign_in(page, live_server_url)
    page.goto(f"{live_server_url}/chat/{reply.chat_id}/")

    page.get_by_test_id("reply").wait_for()
    assert page.get_by_test_id("dictate").count() == 0
    assert not page.get_by_test_id("read-aloud").is_visible()
