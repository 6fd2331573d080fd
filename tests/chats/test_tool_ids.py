"""Ids a model sends to a tool that the database cannot hold: the tool says
so and the turn goes on; nothing raises OverflowError."""

import json

import pytest

from apps.chats.models import Message
from apps.library.ingest.sync import source_sync
from tests.fakes.llm import Reply
from tests.support.fixtures import run_turn

pytestmark = pytest.mark.django_db(transaction=True)

HUGE = 99999999999999999999999


@pytest.fixture
def notes(owner, vault, make_source, embedder):
    vault.write("home/boiler.md", "# Boiler\n\nPriya replaced the diverter valve.\n")
    source = make_source(owner, vault, cloud="allowed")
    source_sync(source=source, embedder=embedder)
    return source


def test_tools_refuse_ids_that_do_not_fit_and_the_turn_goes_on(owner, notes, local_model, llm):
    calls = [
        ("search_notes", {"query": "diverter valve", "collections": [HUGE, "²", -1]}),
        ("search_notes", {"query": "diverter valve", "collections": str(HUGE)}),
        ("get_document", {"document_id": HUGE}),
        ("get_document", {"document_id": "²"}),
        ("get_document", {"document_id": -5}),
        ("list_documents", {"collection": str(HUGE)}),
    ]
    llm.queue(
        *(Reply(tool_calls=[(name, json.dumps(args))]) for name, args in calls),
        Reply(text="Done."),
    )
    _, answer = run_turn(owner, "Who fixed the boiler?")
    assert answer.status == Message.Status.DONE
    results = [m["content"] for m in llm.chat_requests[-1].json["messages"] if m["role"] == "tool"]
    assert len(results) == len(calls)
    # An id that names no collection is dropped: the search covers what the person may read.
    assert "diverter valve" in results[0] and "diverter valve" in results[1]
    assert all("must be a document's number" in r for r in results[2:5])
    assert "boiler" in results[5]
    assert not any("Overflow" in r or "Traceback" in r for r in results)
