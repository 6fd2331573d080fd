"""Which versions a question is about, decided by rules over its wording.

- `history`: the question asks how something changed, so every version of the
  matched documents is wanted, in date order ("how did X change", "over time",
  "went from … to …", "used to", "before", "first" or "back in" in a
  question about the past, "timeline", "evolve").
- `present`: the question asks about now, so only latest versions are searched
  ("current", "currently", "now", "still", "latest", "at the moment", "these days",
  "today", "anymore", "as of").
- `lookup`: anything else; nothing is filtered.

History wins over present ("how has my current plan changed" is about change).
Rules rather than a model: fast, free, testable, and the dates they act on are
computed by code. Each rule has a test in tests/library/test_timemode.py.
"""

from __future__ import annotations

import re

PRESENT = "present"
HISTORY = "history"
LOOKUP = "lookup"
AUTO = "auto"
MODES = (AUTO, PRESENT, HISTORY, LOOKUP)
# What a person reads for each mode (the library's search line): the code
# names above are for tools and the `kb` command.
MODE_WORDS = {
    PRESENT: "current versions",
    HISTORY: "history: every version",
    LOOKUP: "any time",
}

_HISTORY_RULES = [
    r"\bchang(e|ed|es|ing)\b",
    r"\bevol(ve|ved|ves|ving|ution)\b",
    r"\bover (the )?(time|years|months|weeks|course)\b",
    r"\b(history|historical|timeline|trajectory)\b",
    r"\bprogress(ed|ion)?\b",
    r"\bwent from\b|\bgo(ne)? from\b.+\bto\b|\bmoved? from\b.+\bto\b",
    r"\bfrom (v\d+|version \d+|\w+ \d{4}|january|february|march|april|may|june|july|august"
    r"|september|october|november|december)\b.+\bto\b",
    r"\bused to\b|\bno longer\b|\boriginally\b|\bat first\b|\bback then\b",
    r"\b(previous|previously|earlier|formerly)\b",
    # "before" looks back only in a question about the past ("what did we pay
    # before we switched"); "what needs doing before March" is about now.
    r"\bbefore\b(?=.*\b(did|was|were|had|used)\b)|\b(did|was|were|had|used)\b.*\bbefore\b"
    r"|\b\w{3,}ed\b.*\bbefore\b|\bbefore\b.*\b\w{3,}ed\b",
    # The first or an old state, asked in the past tense: "what did the first
    # plan say", "when Mum first moved in", "what did I have back in Year 12".
    r"\b(did|was|were|had)\b.*\b(first|back in|originally|in the beginning)\b",
    r"\b(all|every|each) versions?\b|\bversions? of\b",
    r"\bwhen did\b.+\b(start|stop|become|switch|begin|end|go|turn)\b",
]
_PRESENT_RULES = [
    r"\bcurrent(ly)?\b",
    r"\b(right )?now\b|\bnowadays\b|\btoday\b|\bthese days\b|\bat the moment\b|\bat present\b",
    r"\bstill\b|\banymore\b|\bany more\b",
    r"\b(latest|newest|most recent|up[- ]to[- ]date)\b",
    r"\bas of\b",
]
_HISTORY = [re.compile(rule, re.I) for rule in _HISTORY_RULES]
_PRESENT = [re.compile(rule, re.I) for rule in _PRESENT_RULES]


def classify(question: str) -> str:
    if any(rule.search(question) for rule in _HISTORY):
        return HISTORY
    if any(rule.search(question) for rule in _PRESENT):
        return PRESENT
    return LOOKUP


def resolve(mode: str, question: str) -> str:
    if mode not in MODES:
        raise ValueError(f"unknown time mode {mode!r}; use one of {', '.join(MODES)}")
    return classify(question) if mode == AUTO else mode
