"""Which versions a question is about: one row per rule in timemode's docstring
(at least two questions each), history over present, lookup otherwise."""

from __future__ import annotations

import pytest

from apps.library.versions import timemode
from apps.library.versions.timemode import AUTO, HISTORY, LOOKUP, PRESENT, classify, resolve

HISTORY_QUESTIONS = [
    # "change"
    ("how did my career plan change", "change"),
    ("what changed in the lease between versions", "change"),
    ("what am I changing in the budget", "change"),
    # "evolve"
    ("how did the garden layout evolve", "evolve"),
    ("the evolution of my training schedule", "evolve"),
    # "over time"
    ("my running pace over time", "over time"),
    ("how did rent develop over the years", "over time"),
    ("salary over the course of the contract", "over time"),
    # "history" / "timeline" / "trajectory"
    ("timeline of the Acme application", "timeline"),
    ("show my salary history", "timeline"),
    ("what is the trajectory of my savings", "timeline"),
    # "progress"
    ("how has the thesis progressed", "progress"),
    ("progression of my German lessons", "progress"),
    # "went from … to …"
    ("my weight went from 80 to 75", "went from"),
    ("since we moved from Berlin to Munich what did rent cost", "went from"),
    ("has the plan gone from part-time to full-time", "went from"),
    # "from <version or date> to"
    ("differences from v1 to v3 of the resume", "from version"),
    ("the plan from june to october", "from version"),
    ("what happened from March 2026 to now", "from version"),
    # "used to" and friends
    ("where did I used to work", "used to"),
    ("what did I originally plan for the kitchen", "used to"),
    ("which tools do I no longer use", "used to"),
    ("what did I think at first about the offer", "used to"),
    # "before" and friends
    ("what was my previous address", "previous"),
    ("what did I earn before the promotion", "before"),
    ("who was formerly my landlord", "previous"),
    ("which day were the bins collected before the rounds changed", "before"),
    # the first or an old state, in the past tense
    ("what did the first draft say about the budget", "first"),
    ("which room was she in when she first moved in", "first"),
    ("what did I have on Mondays back in Year 12", "first"),
    # "every version"
    ("show all versions of my resume", "versions"),
    ("compare each version of the plan", "versions"),
    # "when did … start/stop/…"
    ("when did I start running", "when did"),
    ("when did Max become team lead", "when did"),
]

PRESENT_QUESTIONS = [
    # "current"
    ("what is my current address", "current"),
    ("where am I currently working", "current"),
    # "now" and friends
    ("what am I working on right now", "now"),
    ("what is the plan now", "now"),
    ("what do I eat these days", "now"),
    ("who is my doctor at the moment", "now"),
    ("which bank do I use today", "now"),
    ("what do I read nowadays", "now"),
    # "still" / "anymore"
    ("do I still pay for the gym", "still"),
    ("do I use Notion anymore", "still"),
    ("do we own the car any more", "still"),
    # "latest" and friends
    ("show my latest resume", "latest"),
    ("the most recent salary figure", "latest"),
    ("the newest career plan", "latest"),
    ("an up-to-date contact list", "latest"),
    # "as of"
    ("what is the budget as of this week", "as of"),
    ("as of October what is the rent", "as of"),
]

LOOKUP_QUESTIONS = [
    "what is my passport number",
    "where is the Acme offer letter",
    "which exchange rate did I note for the trip",  # not "change"
    "what currency is the budget in",  # not "current"
    "snowboard rental shops",  # not "now"
    "the acknowledgement section of my thesis",  # not "now"
    "recipe for octopus salad",
    "what needs doing to the car before March",  # a deadline, not the past
    "what is left to sort out before we go to Japan",
    "who comes first in the queue",  # "first" without the past tense
    "",
]

HISTORY_BEATS_PRESENT = [
    "how has my current plan changed",
    "what was my latest resume before October",
    "is the salary still what it used to be",
    "how did the current lease evolve over time",
]


@pytest.mark.parametrize(("question", "rule"), HISTORY_QUESTIONS)
def test_questions_about_change_are_history(question, rule):
    assert classify(question) == HISTORY, rule


@pytest.mark.parametrize(("question", "rule"), PRESENT_QUESTIONS)
def test_questions_about_now_are_present(question, rule):
    assert classify(question) == PRESENT, rule


@pytest.mark.parametrize("question", LOOKUP_QUESTIONS)
def test_other_questions_are_lookups(question):
    assert classify(question) == LOOKUP


@pytest.mark.parametrize("question", HISTORY_BEATS_PRESENT)
def test_history_wins_over_present(question):
    assert classify(question) == HISTORY


def test_every_rule_has_at_least_two_questions():
    for table in (HISTORY_QUESTIONS, PRESENT_QUESTIONS):
        rules = [rule for _, rule in table]
        assert all(rules.count(rule) >= 2 for rule in rules)
    assert len({r for _, r in HISTORY_QUESTIONS}) >= len(timemode._HISTORY_RULES)
    assert len({r for _, r in PRESENT_QUESTIONS}) >= len(timemode._PRESENT_RULES)


def test_every_rule_is_exercised_by_the_table():
    for rules, table in (
        (timemode._HISTORY, HISTORY_QUESTIONS),
        (timemode._PRESENT, PRESENT_QUESTIONS),
    ):
        for rule in rules:
            hits = [q for q, _ in table if rule.search(q)]
            assert len(hits) >= 2, rule.pattern


def test_classification_ignores_case():
    assert classify("WHAT IS MY CURRENT ADDRESS") == PRESENT
    assert classify("How Did My Plan CHANGE") == HISTORY


def test_auto_resolves_by_the_rules():
    assert resolve(AUTO, "how did my plan change") == HISTORY
    assert resolve(AUTO, "what is my current plan") == PRESENT
    assert resolve(AUTO, "where is my passport") == LOOKUP


@pytest.mark.parametrize("mode", [PRESENT, HISTORY, LOOKUP])
def test_an_explicit_mode_overrides_the_wording(mode):
    assert resolve(mode, "how has my current plan changed over time") == mode
    assert resolve(mode, "where is my passport") == mode


@pytest.mark.parametrize("mode", ["", "latest", "Present", "HISTORY", "all", "auto "])
def test_resolve_rejects_an_unknown_mode(mode):
    with pytest.raises(ValueError, match="unknown time mode"):
        resolve(mode, "what is my current plan")
