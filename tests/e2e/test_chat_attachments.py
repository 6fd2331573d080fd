"""End to end: attaching files in the chat composer, through a real browser,
a real daphne and a real Huey consumer (the worker indexes the attachment;
the reply waits for it, then the model's search finds it and cites it)."""

from __future__ import annotations

import json
import re

import pytest

from apps.library.models import Document
from tests.e2e.conftest import screenshot
from tests.e2e.test_chat import new_chat_url, reply_state, send, wait_for_status
from tests.fakes.llm import Reply
from tests.support.browser import collect_errors, sign_in
from tests.support.processes import daphne_server, huey_consumer

pytestmark = pytest.mark.e2e


NOTE = (
    "# Bike lock\n\nThe combination of the blue bike lock is 4-7-1-9. "
    "Grandma set it in June 2026.\n"
)
ANSWER = "The blue bike lock opens with 4-7-1-9 [1]."
INDEXING_MS = 90_000  # the worker loads its embedding model first

# Drop files on the composer as a person dragging them from their desktop does.
DROP_JS = """
([name, text, type]) => {
  const data = new DataTransfer();
  data.items.add(new File([text], name, {type}));
  const form = document.getElementById('composer');
  form.dispatchEvent(new DragEvent('dragover', {dataTransfer: data, bubbles: true, cancelable: true}));
  form.dispatchEvent(new DragEvent('drop', {dataTransfer: data, bubbles: true, cancelable: true}));
}
"""


@pytest.fixture
def stack(transactional_db, tmp_path):
    env = {"JARVIS_VAULTS_ROOT": str(tmp_path)}
    with huey_consumer(**env), daphne_server(JARVIS_TEST_HUEY_IMMEDIATE="0", **env) as url:
        yield url


def test_an_attached_note_is_indexed_mentioned_and_cited(page, stack, owner, local_model, llm):
    errors = collect_errors(page)
    llm.queue(
        Reply(tool_calls=[("search_notes", json.dumps({"query": "bike lock combination"}))]),
        Reply(text=ANSWER, chunk_chars=8, delay=0.02),
    )
    sign_in(page, stack)

    # The paperclip: the file uploads at once and becomes a chip.
    page.set_input_files(
        "[data-testid=attach-input]",
        files=[{"name": "bike-lock.md", "mimeType": "text/markdown", "buffer": NOTE.encode()}],
    )
    chip = page.locator("[data-testid=attachment]")
    chip.wait_for()
    assert "bike-lock.md" in chip.inner_text()

    # A program dropped on the composer is refused with its reason; the chip stays.
    page.evaluate(
        DROP_JS, ["setup.exe", "MZ\u0090\u0000 not a document", "application/x-msdownload"]
    )
    refusal = page.locator("[data-testid=attach-error]")
    refusal.wait_for()
    assert "setup.exe" in refusal.inner_text()
    assert chip.count() == 1
    screenshot(page, "chat-attachment-chip")

    send(page, "What is the code of the bike lock?")
    page.wait_for_url(new_chat_url(stack))
    wait_for_status(page, "done", timeout=INDEXING_MS)

    document = Document.objects.get(path="bike-lock.md")
    assert document.status == Document.Status.READY
    cite = page.locator("[data-testid=answer] a.cite[data-cite='1']")
    assert cite.get_attribute("href").startswith(f"/library/doc/{document.pk}/#chunk-")
    assert reply_state(page)["text"].startswith("The blue bike lock opens with 4-7-1-9")
    # The person's message shows what was attached, linking to it.
    attached = page.locator("[data-testid=message-attachment]")
    assert attached.get_attribute("href") == f"/library/doc/{document.pk}/"
    assert "bike-lock.md" in attached.inner_text()
    # The model searched with the attachment in scope and read the note.
    assert "4-7-1-9" in json.dumps(llm.chat_requests[1].json["messages"])
    # The composer is empty again: no chip lingers for the next message.
    assert page.locator("[data-attachment-chips] [data-testid=attachment]").count() == 0
    screenshot(page, "chat-attachment-cited")

    page.set_viewport_size({"width": 390, "height": 844})
    page.reload()
    page.locator("[data-testid=message-attachment]").wait_for()
    screenshot(page, "chat-attachment-phone")

    # The only console error is the refused program's 400.
    assert [e for e in errors if not re.search(r"status of 400", e)] == []
