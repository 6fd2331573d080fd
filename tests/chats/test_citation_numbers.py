"""A citation counts only if its number is one of the passages returned in the
turn: not the one after the last, not zero, not a neighbour of a valid one."""

from __future__ import annotations

import json

import pytest

from apps.chats.citations import verify
from apps.library.ingest.sync import source_sync
from tests.fakes.llm import Reply
from tests.support.fixtures import run_turn


def test_the_number_just_past_the_last_passage_is_cut():
    text, used, invalid = verify("One [1], two [2], three [3], and a fourth [4].", {1, 2, 3})
    assert text == "One [1], two [2], three [3], and a fourth."
    assert (used, invalid) == ([1, 2, 3], 1)


@pytest.mark.parametrize(
    ("reply", "valid", "expected"),
    [
        ("Only [3].", {2}, "Only."),  # 3 follows a valid number but is not one
        ("Only [1].", {2}, "Only."),  # nor is the one before it
        ("Zero [0].", {1}, "Zero."),
        ("Gap [2].", {1, 3}, "Gap."),
        ("Far [100].", {99}, "Far."),
    ],
)
def test_neighbours_of_valid_numbers_are_cut(reply, valid, expected):
    text, used, invalid = verify(reply, valid)
    assert (text, used, invalid) == (expected, [], 1)


@pytest.mark.django_db(transaction=True)
def test_a_reply_citing_one_past_the_passages_loses_that_citation(
    owner, vault, make_source, embedder, local_model, llm
):
    vault.write("home/boiler.md", "# Boiler\n\nTomasz serviced the boiler in March.\n")
    vault.write("home/valve.md", "# Valve\n\nPriya replaced the boiler valve in October.\n")
    source_sync(source=make_source(owner, vault, cloud="allowed"), embedder=embedder)
    llm.queue(
        Reply(tool_calls=[("search_notes", json.dumps({"query": "boiler serviced replaced"}))]),
        Reply(text="Tomasz [1], then Priya [2]; the plumber too [3]."),
    )
    _, answer = run_turn(owner, "Who worked on the boiler?")
    tool = next(m for m in llm.chat_requests[-1].json["messages"] if m["role"] == "tool")
    assert "[2]" in tool["content"] and "[3]" not in tool["content"]  # two passages: [1], [2]
    assert answer.text == "Tomasz [1], then Priya [2]; the plumber too."
    assert [c["n"] for c in answer.citations] == [1, 2]
    assert answer.usage["invalid_citations"] == 1
