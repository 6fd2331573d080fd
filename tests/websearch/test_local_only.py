"""Nothing from a note kept local reaches a web search on the model's say-so:
a turn that reads a local-only note (the chat turns private there) gets no
search sent, even though the tool was offered when the turn began."""

from __future__ import annotations

import json

import pytest

from apps.chats.models import PendingAction
from apps.library.ingest.sync import source_sync
from tests.chats.conftest import run_turn
from tests.fakes.llm import Reply

pytestmark = pytest.mark.django_db(transaction=True)

MARKER = "zebracorn-4417"


@pytest.fixture
def local_note(searcher, make_vault, make_source, embedder):
    vault = make_vault("local")  # a vault folder starts local-only
    vault.write("health/physio.md", f"# Physio\n\nKnee physio every Tuesday. Code {MARKER}.\n")
    source_sync(source=make_source(searcher, vault, name="local"), embedder=embedder)


def test_a_turn_that_read_a_local_only_note_sends_no_web_search(
    searcher, local_note, provider, web, local_model, llm
):
    web.result("Physio", "/pages/bins", "x")
    llm.queue(
        Reply(tool_calls=[("search_notes", json.dumps({"query": "knee physio"}))]),
        Reply(tool_calls=[("web_search", json.dumps({"query": f"physio code {MARKER}"}))]),
        Reply(text="Your physio is on Tuesday [1]."),
    )
    chat, answer = run_turn(searcher, "When is my knee physio?")
    assert "web_search" in [t["function"]["name"] for t in llm.chat_requests[0].json["tools"]]
    assert chat.private
    # Refused when called (the chat is private now, and no Web was ticked).
    call = next(a for a in answer.activity if a["name"] == "web_search")
    assert call["state"] == "error"
    assert web.requests == [] and web.queries == []
    assert not PendingAction.objects.filter(kind="web_search").exists()


def test_with_the_web_toggle_the_query_waits_on_a_card_instead(
    searcher, local_note, provider, web, local_model, llm
):
    llm.queue(
        Reply(tool_calls=[("search_notes", json.dumps({"query": "knee physio"}))]),
        Reply(tool_calls=[("web_search", json.dumps({"query": f"physio code {MARKER}"}))]),
        Reply(text="Click Search if you want it."),
    )
    _, answer = run_turn(searcher, "When is my knee physio?", mentions=[{"kind": "web"}])
    assert web.requests == []
    assert answer.status == "waiting"  # the reply waits for the person's click
    card = PendingAction.objects.get(kind="web_search", message=answer)
    # The person sees exactly what would be sent, and may say no.
    assert card.payload["held"][0]["query"] == f"physio code {MARKER}"
    assert card.status == "pending"
