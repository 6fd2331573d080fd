"""End to end: every refusal of an htmx request is shown, through the one
error path in static/js/app.js (real Chromium, real daphne, the fake model).

The server answers 400/409/404 with a reason; htmx swaps no error response, so
without that path the page said nothing. Each test sends a refusal a person
meets and asserts the reason is on the screen, next to what they used.
Nothing here reaches the internet: the unknown host is a `.invalid` name,
which never resolves (RFC 6761).
"""

from __future__ import annotations

import pytest

from apps.chats.models import Chat, Message
from tests.e2e.conftest import screenshot
from tests.e2e.test_chat import in_a_thread, wait_for_partial
from tests.fakes.llm import Reply
from tests.support.browser import collect_errors, sign_in
from tests.support.fixtures import run_turn

pytestmark = pytest.mark.e2e


def real(errors: list[str]) -> list[str]:
    """Script errors; a refused request itself is not one (the browser logs
    each 4xx as a failed resource, which is the point here)."""
    return [e for e in errors if "Failed to load resource" not in e]


def composer_refusal(page) -> str:
    alert = page.locator("#composer-error [data-testid=refusal]")
    alert.wait_for()
    return alert.inner_text()


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("http://localhost:8101/recipe.html", "non-public address"),
        ("ftp://files.example.org/recipe.txt", "only http and https addresses"),
        ("https://no-such-kitchen.invalid/recipe.html", "could not find no-such-kitchen.invalid"),
    ],
)
def test_the_add_page_says_why_an_address_is_refused(page, live_server_url, owner, address, reason):
    errors = collect_errors(page)
    sign_in(page, live_server_url)
    page.goto(f"{live_server_url}/library/add/")
    page.fill("#id_url", address)
    page.get_by_role("button", name="Add", exact=True).click()
    row = page.locator("#add-results .add-result--error")
    row.wait_for()
    text = row.inner_text()
    assert text.startswith(address)
    assert reason in text and len(text) > len(address) + 5  # a reason follows the address
    assert row.is_visible()
    screenshot(page, f"refusal-add-{address.split(':')[0]}")
    assert real(errors) == []


def test_a_message_over_the_limit_is_refused_by_the_composer(
    page, live_server_url, owner, llm, local_model
):
    errors = collect_errors(page)
    sign_in(page, live_server_url)
    page.fill("#composer-text", "soup." * 8_000)  # 40,000 characters
    page.click("[data-testid=send]")
    reason = composer_refusal(page)
    assert "40,000 characters" in reason and "32,000" in reason
    assert page.locator("#composer-error").is_visible()
    # The text stays in the box to be shortened; nothing was asked of the model.
    assert len(page.input_value("#composer-text")) == 40_000
    assert llm.chat_requests == []
    screenshot(page, "refusal-too-long")
    assert real(errors) == []


def test_a_second_tab_cannot_send_while_a_reply_runs(
    page, live_server_url, owner, llm, local_model
):
    llm.queue(Reply(text="First answer."))
    chat, _ = in_a_thread(run_turn, owner, "First question?")
    errors = collect_errors(page)
    sign_in(page, live_server_url)
    page.goto(f"{live_server_url}/chat/{chat.pk}/")
    other = page.context.new_page()
    other_errors = collect_errors(other)
    other.goto(f"{live_server_url}/chat/{chat.pk}/")

    long_text = "The pump, then the valve; " * 200
    llm.queue(Reply(text=long_text, chunk_chars=4, delay=0.05))
    page.fill("#composer-text", "Tell me everything about the boiler.")
    page.click("[data-testid=send]")
    wait_for_partial(page, long_text, longer_than=10)

    # The other tab still has its text box: Ctrl+Enter sends from it.
    other.fill("#composer-text", "And the radiator?")
    other.press("#composer-text", "Control+Enter")
    reason = composer_refusal(other)
    assert "a reply is still being written" in reason
    assert other.input_value("#composer-text") == "And the radiator?"
    screenshot(other, "refusal-second-tab")
    page.locator("[data-testid=stop]").click()
    assert real(errors) == [] and real(other_errors) == []


def test_regenerate_on_a_model_the_chat_may_no_longer_use(
    page, live_server_url, cloud_user, llm, local_model, cloud_model
):
    llm.queue(Reply(text="The valve was replaced in October."))
    chat, _ = in_a_thread(run_turn, cloud_user, "When was the valve replaced?")
    errors = collect_errors(page)
    sign_in(page, live_server_url)
    page.goto(f"{live_server_url}/chat/{chat.pk}/")
    # Another tab read a local-only note meanwhile: the chat is private now,
    # but this page still offers the cloud model.
    Chat.objects.filter(pk=chat.pk).update(private=True)
    page.select_option("[data-testid=regenerate-model]", "cloud:big")
    page.click("[data-testid=regenerate]")
    reason = composer_refusal(page)
    assert "can only continue on a local model" in reason
    assert Message.objects.filter(chat=chat, role="assistant").count() == 1
    screenshot(page, "refusal-regenerate-cloud")
    assert real(errors) == []


def test_an_error_page_answer_shows_its_heading(page, live_server_url, owner, llm, local_model):
    llm.queue(Reply(text="Noted."))
    chat, _ = in_a_thread(run_turn, owner, "Remember the boiler.")
    errors = collect_errors(page)
    sign_in(page, live_server_url)
    page.goto(f"{live_server_url}/chat/{chat.pk}/")
    Chat.objects.filter(pk=chat.pk).delete()  # deleted in another tab
    page.fill("#composer-text", "Still there?")
    page.click("[data-testid=send]")
    reason = composer_refusal(page)
    assert reason.startswith("There is nothing here.")
    assert "belongs to someone else" in reason
    # The chat's socket, reconnecting, is refused too (the chat is gone): the
    # websocket extension logs that; nothing else may fail.
    gone = [e for e in real(errors) if "WebSocket" not in e and "[object Event]" not in e]
    assert gone == []


def test_a_refusal_goes_after_the_control_and_leaves_on_success(page, live_server_url, owner):
    # A control outside any data-refusal-target: its reason appears right
    # after it, and its next success takes the reason away.
    errors = collect_errors(page)
    sign_in(page, live_server_url)
    page.goto(f"{live_server_url}/library/add/")
    page.evaluate(
        """() => {
          const b = document.createElement('button');
          b.id = 'probe'; b.type = 'button'; b.textContent = 'Probe';
          b.setAttribute('hx-get', '/library/99999999/');
          document.querySelector('h1').after(b);
          htmx.process(b);
        }"""
    )
    page.click("#probe")
    alert = page.locator("#probe + [data-testid=refusal]")
    alert.wait_for()
    assert alert.inner_text().startswith("There is nothing here.")
    page.evaluate(
        """() => {
          const b = document.getElementById('probe');
          b.setAttribute('hx-get', '/library/add/');
          b.setAttribute('hx-swap', 'none');
          htmx.process(b);
        }"""
    )
    page.click("#probe")
    alert.wait_for(state="detached")
    assert real(errors) == []
