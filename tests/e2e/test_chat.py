"""End to end: the chat page through a real browser, a real daphne and the fake
OpenAI-compatible server.

The story: send → a streamed reply with a citation chip → a reload mid-stream
re-attaches to the running reply → Stop keeps what arrived → a chat that read a
local-only note refuses a cloud model. The replies run as tasks in the daphne
child; it reaches the fake model (in this process) over HTTP, and reads the
vault's index from the test database.
"""

from __future__ import annotations

import json
import re
import threading

import pytest
from django.db import connections

from apps.chats.models import Message
from apps.library.ingest.sync import source_sync
from apps.library.models import Document
from tests.e2e.conftest import screenshot
from tests.fakes.llm import Reply
from tests.support.browser import collect_errors, sign_in
from tests.support.fixtures import run_turn

pytestmark = pytest.mark.e2e

# The chat fixtures (the fake model server as a local and a cloud model, a
# person allowed cloud models) and the library ones they bring (vault, embedder).

QUESTION = "Who replaced the diverter valve?"
ANSWER = (
    "Priya replaced the diverter valve in October 2026, after Tomasz had serviced "
    "the boiler in March; it has run quietly since then [1]."
)
STREAM_SECONDS = 8  # how long to wait for a whole slow reply
STOP_WITHIN_MS = 3_000  # Stop must take effect well within this

# The newest reply's answer text and status (its status line's data-status).
ANSWER_TEXT_JS = """
() => {
  const replies = document.querySelectorAll('[data-testid=reply]');
  const reply = replies[replies.length - 1];
  if (!reply) return null;
  const answer = reply.querySelector('[data-testid=answer]');
  const status = document.getElementById(reply.id + '-status');
  return {text: answer ? answer.textContent.trim() : '', status: status && status.dataset.status};
}
"""


def reply_state(page) -> dict:
    return page.evaluate(ANSWER_TEXT_JS)


def wait_for_partial(page, full: str, *, longer_than: int = 0) -> str:
    """Wait until the reply shows more than `longer_than` characters of `full`
    while still being written; return the text seen then."""
    handle = page.wait_for_function(
        f"""([full, longer]) => {{
          const state = ({ANSWER_TEXT_JS})();
          if (!state || !['pending', 'streaming'].includes(state.status)) return false;
          const t = state.text;
          return t.length > longer && t.length < full.length && full.startsWith(t) ? t : false;
        }}""",
        arg=[full, longer_than],
        polling=20,
        timeout=STREAM_SECONDS * 1000,
    )
    return handle.json_value()


def wait_for_status(page, status: str, timeout: int = STREAM_SECONDS * 1000) -> None:
    page.wait_for_function(
        f"s => (({ANSWER_TEXT_JS})() || {{}}).status === s", arg=status, timeout=timeout
    )


def send(page, text: str) -> None:
    page.fill("#composer-text", text)
    page.click("[data-testid=send]")


@pytest.fixture
def console_errors(page) -> list[str]:
    """Console errors and uncaught exceptions of the page; each test asserts none."""
    return collect_errors(page)


@pytest.fixture
def boiler_note(owner, vault, make_source, embedder) -> Document:
    """One note in the owner's vault, local-only (the default cloud policy)."""
    vault.write(
        "home/boiler.md",
        "# Boiler\n\nPriya replaced the diverter valve in October 2026. "
        "Tomasz serviced the boiler in March 2026.\n",
    )
    source_sync(source=make_source(owner, vault), embedder=embedder)
    return Document.objects.get(path="home/boiler.md")


def search_then(reply: Reply) -> list[Reply]:
    return [Reply(tool_calls=[("search_notes", json.dumps({"query": "diverter valve"}))]), reply]


def new_chat_url(base_url: str) -> re.Pattern:
    return re.compile(re.escape(base_url) + r"/chat/\d+/$")


def test_a_question_streams_an_answer_that_cites_the_note(
    page, console_errors, live_server_url, boiler_note, local_model, llm
):
    llm.queue(*search_then(Reply(text=ANSWER, chunk_chars=6, delay=0.06)))  # about 1.5 s
    sign_in(page, live_server_url)
    send(page, QUESTION)
    page.wait_for_url(new_chat_url(live_server_url))

    # The answer grows on the page while it is being written…
    partial = wait_for_partial(page, ANSWER)
    assert "[1]" not in partial
    screenshot(page, "chat-streaming")

    # …and ends with the citation as a chip linking to the note's page.
    wait_for_status(page, "done")
    chip = page.locator("[data-testid=answer] a.cite[data-cite='1']")
    assert chip.inner_text() == "1"
    assert chip.get_attribute("href").startswith(f"/library/doc/{boiler_note.pk}/#chunk-")
    assert "home/boiler.md" in chip.get_attribute("title")
    answer = page.locator("[data-testid=answer]").inner_text()
    assert answer.startswith("Priya replaced the diverter valve") and "[1]" not in answer
    sources = page.locator(".msg__sources")
    assert sources.is_visible() and "home/boiler.md" in sources.inner_text()
    assert "search_notes" in page.locator(".msg__activity").text_content()
    page.locator("[data-testid=send]").wait_for()  # Stop turned back into Send
    screenshot(page, "chat-cited")

    # The model was asked twice: the search, then the answer with its result.
    requests = llm.chat_requests
    assert len(requests) == 2
    assert "diverter valve in October 2026" in json.dumps(requests[1].json["messages"])
    saved = Message.objects.get(role="assistant")
    assert saved.status == "done" and saved.text == ANSWER
    assert console_errors == []


def test_a_reload_mid_stream_re_attaches_to_the_running_reply(
    page, console_errors, live_server_url, owner, local_model, llm
):
    text = " ".join(f"Step {n}: check the pressure gauge." for n in range(1, 13))  # ~380 chars
    llm.queue(Reply(text=text, chunk_chars=5, delay=0.05))  # about 4 s
    sign_in(page, live_server_url)
    send(page, "How do I bleed the radiators?")
    page.wait_for_url(new_chat_url(live_server_url))
    before = wait_for_partial(page, text, longer_than=20)

    page.reload()
    # The reloaded page follows the same reply: it is still running, Stop is
    # offered, and the text keeps growing on this page until the end.
    page.locator("[data-testid=stop]").wait_for()
    seen = wait_for_partial(page, text, longer_than=len(before))
    wait_for_partial(page, text, longer_than=len(seen))
    screenshot(page, "chat-reattached")
    wait_for_status(page, "done")
    assert reply_state(page)["text"] == text
    page.locator("[data-testid=send]").wait_for()

    # One reply, generated once: the reload did not start another.
    assert len(llm.chat_requests) == 1
    assert Message.objects.get(role="assistant").text == text
    assert console_errors == []


def test_stop_keeps_what_arrived_and_frees_the_composer(
    page, console_errors, live_server_url, owner, local_model, llm
):
    long_text = "The boiler manual says " + "check the valve, then the pump; " * 80
    llm.queue(Reply(text=long_text, chunk_chars=4, delay=0.05))  # about 40 s: never finishes
    sign_in(page, live_server_url)
    send(page, "Read me the boiler manual.")
    page.wait_for_url(new_chat_url(live_server_url))
    wait_for_partial(page, long_text, longer_than=30)

    stop = page.locator("[data-testid=stop]")
    assert stop.inner_text() == "Stop"
    stop.click()
    wait_for_status(page, "stopped", timeout=STOP_WITHIN_MS)
    status = page.locator(".msg__status")
    assert status.inner_text().startswith("Stopped")
    kept = reply_state(page)["text"]
    assert len(kept) > 30 and long_text.startswith(kept)
    assert "what arrived before you stopped it" in page.locator(".msg__notes").inner_text()
    screenshot(page, "chat-stopped")

    # The model's stream was abandoned, and the saved reply keeps its text.
    request = llm.chat_requests[0]
    assert request.done.wait(5) and request.closed_early
    saved = Message.objects.get(role="assistant")
    assert saved.status == "stopped" and long_text.startswith(saved.text)
    assert len(saved.text) >= len(kept)

    # Send is back and the chat takes the next question.
    llm.queue(Reply(text="Page one is about the pump."))
    send(page, "Just the first page, then.")
    page.locator("[data-testid=reply]").nth(1).wait_for()
    wait_for_status(page, "done")
    assert reply_state(page)["text"] == "Page one is about the pump."
    page.locator("[data-testid=send]").wait_for()
    assert console_errors == []


def in_a_thread(function, *args, **kwargs):
    """Run sync code that needs its own event loop (Playwright's holds this thread)."""
    result = {}

    def target():
        try:
            result["value"] = function(*args, **kwargs)
        except BaseException as exc:  # re-raised below
            result["error"] = exc
        finally:
            connections.close_all()

    thread = threading.Thread(target=target)
    thread.start()
    thread.join(60)
    if "error" in result:
        raise result["error"]
    return result["value"]


def test_a_private_chat_refuses_a_cloud_model(
    page, console_errors, live_server_url, cloud_user, boiler_note, local_model, cloud_model, llm
):
    # A turn on the local model read the local-only note: the chat is private.
    llm.queue(*search_then(Reply(text="In October 2026 [1].")))
    chat, _ = in_a_thread(run_turn, cloud_user, QUESTION)
    assert chat.private and chat.model_label == ""

    sign_in(page, live_server_url)
    page.goto(f"{live_server_url}/chat/{chat.pk}/")
    assert page.locator("[data-testid=private-badge]").is_visible()
    assert page.locator("[data-testid=answer] a.cite[data-cite='1']").count() == 1
    # The picker offers local models only; a stale page that still offers the
    # cloud one is refused by the composer (tests/e2e/test_chat_header_live.py).
    assert page.locator("#chat-model option[value='cloud:big']").count() == 0
    assert page.locator("#chat-model").input_value() == ""  # still the default
    screenshot(page, "chat-private-refused")
    chat.refresh_from_db()
    assert chat.model_label == "" and chat.private
    assert console_errors == []
