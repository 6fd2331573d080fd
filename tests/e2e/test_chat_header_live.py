"""End to end: the chat header tells the truth while the page stays open, and a
private chat's refused cloud model is explained by the composer (real
Chromium, real daphne, the fake OpenAI server).

A turn that reads local-only notes makes the chat private; the header's
"private" badge and its model picker (local models only from then on) change
over the chat's socket, not after a reload. A private chat asked to use a cloud
model, by the picker or by a send, gets the reason and what to do instead
next to the composer, through the one error path (static/js/app.js).
"""

from __future__ import annotations

import pytest

from apps.chats.models import Chat, Message
from tests.e2e.conftest import screenshot
from tests.e2e.test_chat import boiler_note, in_a_thread, search_then
from tests.fakes.llm import Reply
from tests.support.browser import collect_errors, sign_in
from tests.support.fixtures import run_turn

pytestmark = pytest.mark.e2e

boiler_note = boiler_note  # the fixture, used by name below

# Counts the chat socket's frames, so a test can wait for the first one (the
# chat as saved when the socket opened) before changing the chat behind the
# page. Only the chat's: the header's /ws/ping/ socket (notices) is an htmx
# socket too, and its frame can come first.
FRAMES_SEEN = """
window.__framesSeen = 0;
document.addEventListener("htmx:wsAfterMessage", (event) => {
  if (event.target.closest('[ws-connect^="/ws/chats/"]')) window.__framesSeen += 1;
});
"""
CLOUD_OPTION = "#chat-model option[value='cloud:big']"


def real(errors: list[str]) -> list[str]:
    """Script errors; a refused request is logged by the browser as a failed
    resource, which is the point of the refusal tests."""
    return [e for e in errors if "Failed to load resource" not in e]


def composer_refusal(page) -> str:
    alert = page.locator("#composer-error [data-testid=refusal]")
    alert.wait_for()
    assert alert.is_visible()
    return alert.inner_text()


def stays_on_the_page(page):
    """Mark the page; `still_the_same_page` is true only if it never reloaded."""
    page.evaluate("() => { window.__notReloaded = true; }")


def still_the_same_page(page) -> bool:
    return page.evaluate("() => window.__notReloaded === true")


def test_the_private_badge_and_the_model_picker_change_while_the_page_is_open(
    page, live_server_url, cloud_user, boiler_note, local_model, cloud_model, llm
):
    llm.queue(Reply(text="Hello, ask me about your notes."))
    chat, _ = in_a_thread(run_turn, cloud_user, "Hello")
    assert not chat.private
    errors = collect_errors(page)
    sign_in(page, live_server_url)
    page.goto(f"{live_server_url}/chat/{chat.pk}/")
    assert page.locator("[data-testid=private-badge]").count() == 0
    assert page.locator(CLOUD_OPTION).count() == 1  # the chat may still go to the cloud
    stays_on_the_page(page)

    # This turn's search reads the local-only note: the chat becomes private.
    llm.queue(*search_then(Reply(text="Priya replaced it in October 2026 [1].")))
    page.fill("#composer-text", "Who replaced the diverter valve?")
    page.press("#composer-text", "Enter")

    badge = page.locator("[data-testid=private-badge]")
    badge.wait_for()
    assert badge.is_visible() and badge.text_content().strip() == "private"
    # The picker offers local models only now, and still shows the chat's model.
    page.wait_for_function("sel => document.querySelectorAll(sel).length === 0", arg=CLOUD_OPTION)
    assert page.locator("#chat-model").input_value() == ""
    assert "local-7b" in page.locator("#chat-model").inner_text()
    page.locator("[data-testid=send]").wait_for()  # the reply finished
    assert still_the_same_page(page)
    chat.refresh_from_db()
    assert chat.private
    screenshot(page, "chat-header-private-live")
    assert real(errors) == []


def test_a_private_chat_switched_to_a_cloud_model_is_told_why_by_the_composer(
    page, live_server_url, cloud_user, local_model, cloud_model, llm
):
    llm.queue(Reply(text="The valve was replaced in October."))
    chat, _ = in_a_thread(run_turn, cloud_user, "When was the valve replaced?")
    errors = collect_errors(page)
    sign_in(page, live_server_url)
    page.add_init_script(FRAMES_SEEN)
    page.goto(f"{live_server_url}/chat/{chat.pk}/")
    stays_on_the_page(page)
    # The socket has sent the chat as it was; then another tab read a
    # local-only note: this page still offers the cloud.
    page.wait_for_function("() => window.__framesSeen > 0")
    Chat.objects.filter(pk=chat.pk).update(private=True)

    page.select_option("#chat-model", "cloud:big")
    page.locator("[data-testid=model-form] button[type=submit]").click()
    reason = composer_refusal(page)
    assert "can only continue on a local model" in reason
    assert "big is a cloud model" in reason
    assert "Choose a local model" in reason  # what to do instead
    assert page.locator("#chat-model").input_value() == ""  # back to the model in use
    assert still_the_same_page(page)
    chat.refresh_from_db()
    assert chat.model_label == ""
    screenshot(page, "chat-private-cloud-switch-refused")
    assert real(errors) == []


def test_a_private_chat_on_a_cloud_model_refuses_the_send_by_the_composer(
    page, live_server_url, cloud_user, local_model, cloud_model, llm
):
    llm.queue(Reply(text="The valve was replaced in October."))
    chat, _ = in_a_thread(run_turn, cloud_user, "When was it replaced?", model="cloud:big")
    # The chat read local-only notes since (an attachment, another tab).
    Chat.objects.filter(pk=chat.pk).update(private=True)
    errors = collect_errors(page)
    sign_in(page, live_server_url)
    page.goto(f"{live_server_url}/chat/{chat.pk}/")
    asked = len(llm.chat_requests)

    page.fill("#composer-text", "And who did it?")
    page.press("#composer-text", "Enter")
    reason = composer_refusal(page)
    assert "can only continue on a local model" in reason
    assert "Choose a local model in the chat's model menu" in reason
    assert page.input_value("#composer-text") == "And who did it?"  # kept to send again
    # Nothing was written and no model was asked.
    assert Message.objects.filter(chat=chat).count() == 2
    assert len(llm.chat_requests) == asked
    screenshot(page, "chat-private-cloud-send-refused")

    # The next step works: a local model, then the same words go.
    llm.queue(Reply(text="Priya did."))
    page.select_option("#chat-model", "home:local-7b")
    page.locator("[data-testid=model-form] button[type=submit]").click()
    page.wait_for_function("() => !document.querySelector('#composer-error [data-testid=refusal]')")
    page.press("#composer-text", "Enter")
    page.locator("[data-testid=answer]", has_text="Priya did.").wait_for()
    assert real(errors) == []


def test_regenerating_on_another_model_moves_the_header_picker_to_it(
    page, live_server_url, cloud_user, local_model, cloud_model, llm
):
    llm.queue(Reply(text="The valve was replaced in October."))
    chat, _ = in_a_thread(run_turn, cloud_user, "When was the valve replaced?")
    errors = collect_errors(page)
    sign_in(page, live_server_url)
    page.goto(f"{live_server_url}/chat/{chat.pk}/")
    assert page.locator("#chat-model").input_value() == ""  # the default, local
    stays_on_the_page(page)

    llm.queue(Reply(text="In October, by Priya."))
    page.select_option("[data-testid=regenerate-model]", "cloud:big")
    page.click("[data-testid=regenerate]")
    page.wait_for_function("() => document.querySelector('#chat-model').value === 'cloud:big'")
    page.locator("[data-testid=answer]", has_text="In October, by Priya.").wait_for()
    assert still_the_same_page(page)
    chat.refresh_from_db()
    assert chat.model_label == "cloud:big"
    assert real(errors) == []


def test_a_model_chosen_in_one_tab_shows_in_the_other_at_once(
    page, live_server_url, cloud_user, local_model, cloud_model, llm
):
    llm.queue(Reply(text="The valve was replaced in October."))
    chat, _ = in_a_thread(run_turn, cloud_user, "When was the valve replaced?")
    errors = collect_errors(page)
    sign_in(page, live_server_url)
    other = page.context.new_page()  # the same person's second tab
    for tab in (page, other):
        tab.add_init_script(FRAMES_SEEN)
        tab.goto(f"{live_server_url}/chat/{chat.pk}/")
        tab.wait_for_function("() => window.__framesSeen > 0")  # its socket is open
    stays_on_the_page(other)

    page.select_option("#chat-model", "cloud:big")
    page.locator("[data-testid=model-form] button[type=submit]").click()

    other.wait_for_function("() => document.querySelector('#chat-model').value === 'cloud:big'")
    assert still_the_same_page(other)
    chat.refresh_from_db()
    assert chat.model_label == "cloud:big"
    assert real(errors) == []
