"""Two web processes sharing a channel layer on a real Redis
(JARVIS_CHANNEL_LAYER=redis://…, as docs/deploy.md's several-process setup
has it): a reply started on a page served by one daphne is followed live by
a page served by the other, and Stop pressed there stops it in the process
that runs it (apps.chats.relay, apps.chats.owner)."""

from __future__ import annotations

import pytest

from apps.chats.models import Message
from tests.e2e.conftest import screenshot
from tests.e2e.test_chat import new_chat_url, reply_state, send, wait_for_partial, wait_for_status
from tests.fakes.llm import Reply
from tests.support.browser import collect_errors, sign_in
from tests.support.processes import daphne_server

pytestmark = pytest.mark.e2e

LONG_TEXT = "The boiler manual says " + "check the valve, then the pump; " * 80  # ~40 s


@pytest.fixture
def two_processes(redis, transactional_db):
    with (
        daphne_server(JARVIS_CHANNEL_LAYER=redis.url) as first,
        daphne_server(JARVIS_CHANNEL_LAYER=redis.url) as second,
    ):
        yield first, second


def tab(browser, base_url: str):
    page = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
    page.set_default_timeout(15_000)
    sign_in(page, base_url)
    return page


def test_a_page_on_the_other_process_follows_the_reply_and_stops_it(
    browser, two_processes, owner, local_model, llm
):
    on_a, on_b = two_processes
    llm.queue(Reply(text=LONG_TEXT, chunk_chars=4, delay=0.05))  # never finishes in the test
    first = tab(browser, on_a)
    errors = collect_errors(first)
    send(first, "Read me the boiler manual.")
    first.wait_for_url(new_chat_url(on_a))
    started = wait_for_partial(first, LONG_TEXT, longer_than=20)
    chat_path = first.url.removeprefix(on_a)

    # The same chat opened on the other process: the reply running in A
    # shows there as it is (the saved copy, then A's whole reply) and keeps
    # growing, frame by frame, through Redis.
    second = tab(browser, on_b)
    errors += collect_errors(second)
    second.goto(on_b + chat_path)
    second.locator("[data-testid=stop]").wait_for()
    seen = wait_for_partial(second, LONG_TEXT, longer_than=len(started))
    wait_for_partial(second, LONG_TEXT, longer_than=len(seen) + 20)
    screenshot(second, "chat-followed-on-another-process")

    # Stop on B stops the reply in A: both pages say so, the model's stream is
    # abandoned, and the saved reply keeps what arrived.
    second.locator("[data-testid=stop]").click()
    # Generous: the Stop and the final frame each cross Redis, on a loaded machine.
    wait_for_status(second, "stopped", timeout=10_000)
    wait_for_status(first, "stopped", timeout=10_000)
    request = llm.chat_requests[0]
    assert request.done.wait(5) and request.closed_early
    saved = Message.objects.get(role="assistant")
    assert saved.status == Message.Status.STOPPED
    assert LONG_TEXT.startswith(saved.text) and len(saved.text) > len(seen)
    # The pages read the answer's text trimmed; a stop may land just after a space.
    assert reply_state(second)["text"] == reply_state(first)["text"] == saved.text.strip()
    first.locator("[data-testid=send]").wait_for()
    second.locator("[data-testid=send]").wait_for()
    assert errors == []
