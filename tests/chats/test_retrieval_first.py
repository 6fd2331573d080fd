"""Retrieval first: Jarvis searches the notes itself before the model's first
round, so a model that never calls a tool, or has no tool support at all,
still answers from the notes with a verified citation."""

import json
import re

import pytest

from apps.chats.first_search import FIRST_BUDGET_CHARS, MODE_HINTS, NOTHING, not_about_notes
from apps.chats.tools import LOCAL_ONLY_STOP
from apps.library.ingest.sync import source_sync
from tests.fakes.llm import Reply
from tests.support.fixtures import run_turn

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def notes(owner, make_vault, make_source, embedder):
    shared = make_vault("house")
    shared.write(
        "boiler.md",
        "# Boiler\n\nThe boiler service is due on 14 April. Hale & Sons do it.\n",
    )
    shared.write("private/health.md", "# Health\n\nMy knee physio is every Tuesday at 9.\n")
    source_sync(source=make_source(owner, shared, name="house", cloud="allowed"), embedder=embedder)


def user_text(request) -> str:
    message = request.json["messages"][-1]
    content = message["content"]
    return content if isinstance(content, str) else json.dumps(content)


def test_a_model_that_never_calls_a_tool_answers_with_a_verified_citation(
    owner, notes, local_model, llm
):
    llm.queue(Reply(text="The boiler service is due on 14 April, by Hale & Sons [1]."))
    _, answer = run_turn(owner, "When is the boiler service due, and who does it?")
    assert len(llm.chat_requests) == 1
    sent = user_text(llm.chat_requests[0])
    # Jarvis's block first, the question last: what a model answers is what it read last.
    assert sent.startswith("Jarvis searched the notes")
    assert sent.endswith("\n\nQuestion:\nWhen is the boiler service due, and who does it?")
    assert "<retrieved_data>" in sent and '[1] "Boiler" · boiler.md' in sent
    assert "latest version" in sent
    assert [c["path"] for c in answer.citations] == ["boiler.md"]
    assert answer.activity[0]["name"] == "search_notes" and answer.activity[0]["first"]
    # The stored question is what the person wrote.
    assert "<retrieved_data>" not in json.dumps(answer.parent.turns)


@pytest.fixture
def boiler_versions(owner, vault, make_source, embedder):
    vault.write("home/boiler_2026-10.md", "# Boiler\n\nThe boiler pressure is 1.5 bar.\n")
    vault.write("home/boiler_2026-03.md", "# Boiler\n\nThe boiler pressure is 1.2 bar.\n")
    source_sync(source=make_source(owner, vault), embedder=embedder)


def test_a_question_about_change_gets_the_versions_oldest_first_and_is_asked_for_each(
    owner, boiler_versions, local_model, llm
):
    # Told only "prefer the latest version", a small model answered "how did
    # it change?" with the latest value alone.
    llm.queue(Reply(text="1.2 bar in March [1], 1.5 bar in October [2]."))
    run_turn(owner, "How did the boiler pressure change over time?")
    sent = user_text(llm.chat_requests[0])
    assert MODE_HINTS["history"] in sent
    assert sent.index("1.2 bar") < sent.index("1.5 bar")

    llm.queue(Reply(text="1.5 bar [1]."))
    run_turn(owner, "What is the boiler pressure now?")
    assert MODE_HINTS["history"] not in user_text(llm.chat_requests[1])


def test_a_model_without_tool_support_still_gets_the_passages(owner, notes, local_model, llm):
    local_model.supports_tools = False
    local_model.save()
    llm.queue(Reply(text="Hale & Sons do it [1]."))
    _, answer = run_turn(owner, "Who services the boiler?")
    request = llm.chat_requests[0].json
    assert "tools" not in request
    assert "Hale & Sons do it" in user_text(llm.chat_requests[0])
    assert answer.citations[0]["path"] == "boiler.md"


def test_small_talk_is_not_searched(owner, notes, local_model, llm):
    llm.queue(Reply(text="Hello!"))
    _, answer = run_turn(owner, "Hi Jarvis!")
    assert "<retrieved_data>" not in user_text(llm.chat_requests[0])
    assert answer.activity == []


def test_a_question_with_nothing_relevant_says_so_to_the_model(owner, notes, local_model, llm):
    llm.queue(Reply(text="Paris."))
    _, answer = run_turn(owner, "qwxzv")
    assert NOTHING in user_text(llm.chat_requests[0])
    assert answer.citations == []


def test_a_local_passage_in_the_first_search_turns_the_chat_private(owner, notes, local_model, llm):
    llm.queue(Reply(text="Tuesdays at 9 [1]."))
    chat, answer = run_turn(owner, "When is my knee physio?")
    assert chat.private
    assert answer.citations[0]["path"] == "private/health.md"


def test_a_cloud_model_answers_a_general_question_as_one(cloud_user, notes, cloud_model, llm):
    llm.queue(Reply(text="Paris is the capital of France."))
    chat, answer = run_turn(cloud_user, "What is the capital of France?", model="cloud:big")
    assert answer.text == "Paris is the capital of France."
    assert len(llm.chat_requests) == 1
    assert "knee physio" not in json.dumps(llm.chat_requests[0].json)
    assert not chat.private


def test_a_cloud_model_gets_the_refusal_when_only_local_notes_are_relevant(
    cloud_user, notes, cloud_model, llm
):
    chat, answer = run_turn(cloud_user, "When is my knee physio?", model="cloud:big")
    assert answer.text == LOCAL_ONLY_STOP
    assert llm.chat_requests == []  # no model call at all
    assert not chat.private


def test_the_model_repeating_the_first_search_runs_no_new_search(
    owner, notes, local_model, llm, monkeypatch
):
    from apps.chats.tools import library

    calls = []
    real = library.search
    monkeypatch.setattr(library, "search", lambda **kw: calls.append(kw) or real(**kw))
    question = "When is the boiler service due?"
    llm.queue(
        Reply(tool_calls=[("search_notes", json.dumps({"query": question}))]),
        Reply(text="14 April [1]."),
    )
    _, answer = run_turn(owner, question)
    assert answer.citations[0]["path"] == "boiler.md"
    assert len(calls) == 1  # the model's call with the question reuses the first search


def test_the_passages_handed_over_fit_one_budget_of_text(
    owner, make_vault, make_source, embedder, local_model, llm
):
    # Eight notes that match, each a long section: the first search hands
    # over as many as fit the budget, so the first request stays short.
    vault = make_vault("garden")
    for n in range(8):
        body = f"The greenhouse heater setting number {n} is written here. " * 30
        vault.write(f"heater-{n}.md", f"# Greenhouse heater {n}\n\n{body}\n")
    source_sync(source=make_source(owner, vault, name="garden"), embedder=embedder)
    llm.queue(Reply(text="It varies [1]."))
    run_turn(owner, "What is the greenhouse heater setting?")
    sent = user_text(llm.chat_requests[0])
    block = sent.split("<retrieved_data>", 1)[1].split("</retrieved_data>", 1)[0]
    handed = len(re.findall(r"^\[\d+\] ", block, re.M))
    assert 1 < handed < 8
    assert len(block) < FIRST_BUDGET_CHARS + 200 * handed  # the text, and a label for each


@pytest.mark.parametrize(
    ("text", "skipped"),
    [
        ("Hi", True),
        ("thanks!", True),
        ("Thank you very much, Jarvis.", True),
        ("12 * 7 =", True),
        ("When is the boiler service due?", False),
        ("hi, when is the boiler due?", False),
    ],
)
def test_what_is_clearly_not_about_the_notes(text, skipped):
    assert not_about_notes(text) is skipped
