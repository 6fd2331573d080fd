"""End to end: the send's answer and the chat socket agree. A reply's first
frames can reach the page before the send's answer has put the reply there
(here: the answer is held back in the browser until the whole reply has
streamed). The page holds those frames and applies them once the answer is
swapped in, so the reply shows whole without asking the socket for it again
(static/js/chat.js `hold`, `applyHeld`)."""

from __future__ import annotations

import json
import time

import pytest

from tests.e2e.test_chat import reply_state, send, wait_for_status
from tests.e2e.test_chat_parity import start_chat
from tests.fakes.llm import Reply
from tests.support.browser import collect_errors

pytestmark = pytest.mark.e2e

ANSWER = "The valve was replaced in October, after the March service, and it runs quietly."


@pytest.fixture
def console_errors(page) -> list[str]:
    return collect_errors(page)


def test_frames_that_beat_the_sends_answer_are_applied_when_it_lands(
    page,
    console_errors,
    live_server_url,
    owner,
    local_model,
    llm,
):
    llm.queue(Reply(text="First."), Reply(text=ANSWER, chunk_chars=8, delay=0.03))
    start_chat(page, live_server_url, "Hello")
    asked_again = []
    page.on(
        "websocket",
        lambda ws: ws.on(
            "framesent",
            lambda payload: asked_again.append(payload) if "refresh" in payload else None,
        ),
    )
    # The socket that is open now was opened before the listener: record its
    # frames too, by reloading (a fresh page, a fresh socket).
    page.reload()
    page.locator("[data-testid=send]").wait_for()

    held_back = []

    def hold_back(route):
        response = route.fetch()  # the server has the send and starts the reply
        held_back.append((route, response.status, response.headers, response.body()))

    page.route("**/chat/*/send/", hold_back)
    send(page, "When was the valve replaced?")
    # The answer reaches the page only once the reply (about 0.4 s) has
    # streamed to the end: every frame of it came first.
    page.wait_for_function("() => true")  # let the route handler run
    deadline = time.monotonic() + 15
    while not (held_back and llm.chat_requests[-1].done.is_set()) and time.monotonic() < deadline:
        page.wait_for_timeout(100)
    page.wait_for_timeout(1000)  # the final frame has reached the page
    assert reply_state(page)["text"] == "First."  # the new reply is not on the page yet
    route, status, headers, body = held_back[0]
    route.fulfill(status=status, headers=headers, body=body)
    wait_for_status(page, "done")
    assert reply_state(page)["text"] == ANSWER
    page.locator("[data-testid=send]").wait_for()  # Stop turned back into Send
    assert asked_again == []  # nothing was asked of the socket again
    assert json.dumps(llm.chat_requests[1].json).count("When was the valve replaced?") == 1
    assert console_errors == []
