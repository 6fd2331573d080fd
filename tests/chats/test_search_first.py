"""Search before refusing: an "I don't know" in a turn where the model searched
nothing gets one follow-up asking it to search first, sent by code."""

import json

import pytest

from apps.chats.refusals import SEARCH_FIRST, is_refusal
from apps.library.ingest.sync import source_sync
from tests.fakes.llm import Reply
from tests.support.fixtures import run_turn

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def notes(owner, vault, make_source, embedder):
    vault.write("boiler.md", "# Boiler\n\nThe boiler was serviced on 3 March by Hale & Sons.\n")
    source_sync(source=make_source(owner, vault), embedder=embedder)


def last_user_text(request) -> str:
    return request.json["messages"][-1]["content"]


def test_a_refusal_without_a_search_is_sent_back_once_asking_to_search(
    owner, notes, local_model, llm
):
    # Jarvis's own first search finds nothing relevant for this wording, so
    # the turn has not really searched yet.
    llm.queue(
        Reply(text="I don't know who fixed the kitchen tap."),
        Reply(tool_calls=[("search_notes", json.dumps({"query": "boiler serviced"}))]),
        Reply(text="It was serviced on 3 March [1]."),
    )
    _, answer = run_turn(owner, "Who fixed the kitchen tap?")
    assert len(llm.chat_requests) == 3
    assert last_user_text(llm.chat_requests[1]) == SEARCH_FIRST
    assert answer.text == "It was serviced on 3 March [1]."
    assert answer.citations[0]["path"] == "boiler.md"
    assert "I don't know" not in json.dumps(answer.turns)  # the refusal is not kept


def test_a_refusal_after_a_search_that_found_passages_stands(owner, notes, local_model, llm):
    llm.queue(Reply(text="I don't have that information in my notes."))
    _, answer = run_turn(owner, "When was the boiler serviced?")
    assert len(llm.chat_requests) == 1  # the first search found the boiler note
    assert answer.text == "I don't have that information in my notes."


def test_a_refusal_after_an_empty_search_is_sent_back_once(owner, notes, local_model, llm):
    llm.queue(
        Reply(tool_calls=[("search_notes", json.dumps({"query": "car insurance"}))]),
        Reply(text="I don't have that information in my notes."),
        Reply(text="Nothing in your notes says who insures the car."),
    )
    _, answer = run_turn(owner, "Who insures the car?")
    assert "No passages match" in json.dumps(llm.chat_requests[1].json)
    assert last_user_text(llm.chat_requests[2]) == SEARCH_FIRST
    assert answer.text == "Nothing in your notes says who insures the car."


def test_the_follow_up_is_sent_only_once(owner, notes, local_model, llm):
    llm.queue(Reply(text="I don't know."), Reply(text="I still do not know."))
    _, answer = run_turn(owner, "What is the wifi password?")
    assert len(llm.chat_requests) == 2
    assert answer.text == "I still do not know."


def test_an_answer_that_is_no_refusal_gets_no_follow_up(owner, notes, local_model, llm):
    llm.queue(Reply(text="Hello! How can I help?"))
    run_turn(owner, "Hi")
    assert len(llm.chat_requests) == 1


@pytest.mark.parametrize(
    ("text", "refusal"),
    [
        ("I don't know.", True),
        ("I do not have any information about that.", True),
        ("I couldn’t find anything about the boiler.", True),
        ("Your notes don't mention the wifi password.", True),
        ("That is not mentioned in your notes.", True),
        ("The boiler was serviced on 3 March.", False),
        ("I know the boiler was serviced in March.", False),
    ],
)
def test_what_counts_as_a_refusal(text, refusal):
    assert is_refusal(text) is refusal
