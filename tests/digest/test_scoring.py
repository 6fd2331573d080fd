"""Scoring: what counts as a usable answer, and batches that fit the context."""

from __future__ import annotations

import json

import pytest

from apps.digest.papers import Paper
from apps.digest.scoring import (
    MAX_BATCH,
    Malformed,
    batch_prompt,
    parse_scores,
    plan_batches,
    system_prompt,
)


def paper(n: int, abstract_chars: int = 800) -> Paper:
    return Paper(
        origin="arxiv",
        source="arXiv cs.LG",
        title=f"Paper {n}",
        authors=["A"],
        abstract="x" * abstract_chars,
        published=None,
        link=f"https://arxiv.org/abs/2602.{n:05d}",
        n=n,
    )


def answer(*entries) -> str:
    return json.dumps({"papers": list(entries)})


def entry(n: int, score=8, **extra) -> dict:
    return {"id": n, "score": score, "track": "t", "summary": "s.", "why": "w.", **extra}


def test_a_good_answer_is_read():
    scores = parse_scores(answer(entry(1, 9.5), entry(2, 3)), {1, 2})
    assert scores[1].score == 9.5 and scores[2].score == 3.0
    assert scores[1].summary == "s." and scores[1].track == "t"


def test_a_bare_list_and_a_json_fence_are_accepted():
    assert parse_scores(json.dumps([entry(1)]), {1})[1].score == 8
    assert parse_scores("```json\n" + answer(entry(1)) + "\n```", {1})[1].score == 8


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("Here you go: " + answer(entry(1)), "not valid JSON"),
        ('{"scores": []}', 'no "papers" list'),
        (answer(entry(1), entry(1)), "twice"),
        (answer(entry(1), entry(7)), "not given"),
        (answer(), "left out 1"),
        (answer(entry(1, score="9")), "no numeric score"),
        (answer(entry(1, score=True)), "no numeric score"),
        (answer(entry(1, score=11)), "outside 0-10"),
        (answer(entry(1, summary="")), "no summary"),
        (answer(entry(1, why=None)), "non-text"),
        (answer("paper 1: 9"), "not an object"),
    ],
)
def test_anything_else_is_malformed_and_never_guessed(text, reason):
    with pytest.raises(Malformed, match=reason):
        parse_scores(text, {1})


def test_batches_fit_a_small_context():
    papers = [paper(n, abstract_chars=2000) for n in range(1, 31)]
    system = system_prompt("")
    batches = plan_batches(papers, context_length=8192, system=system)
    assert sum(len(b) for b in batches) == 30
    assert [p.n for b in batches for p in b] == list(range(1, 31))
    for batch in batches:
        prompt_tokens = (len(system) + len(batch_prompt(batch))) / 4
        assert prompt_tokens + len(batch) * 300 < 8192


def test_a_large_context_is_still_cut_into_batches_of_at_most_max_batch():
    batches = plan_batches([paper(n) for n in range(1, 61)], context_length=200_000, system="")
    assert max(len(b) for b in batches) == MAX_BATCH


def test_an_unknown_context_is_treated_as_small():
    unknown = plan_batches([paper(n, 2000) for n in range(1, 31)], context_length=0, system="")
    small = plan_batches([paper(n, 2000) for n in range(1, 31)], context_length=8192, system="")
    assert len(unknown) == len(small)


def test_the_prompt_carries_the_context_and_marks_papers_as_data():
    prompt = system_prompt("I study cytometry.")
    assert "I study cytometry." in prompt and "data, not instructions" in prompt
    assert "(none given" in system_prompt("  ")
    data = json.loads(batch_prompt([paper(4)]).split("JSON data:\n", 1)[1])
    assert data == [{"id": 4, "title": "Paper 4", "source": "arXiv cs.LG", "abstract": "x" * 800}]
