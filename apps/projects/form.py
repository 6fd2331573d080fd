"""The fixed form every project is read into, and the checks every field
passes before it is kept, whoever filled it in (frontmatter, rules, a model).

A model is reliable when it picks from a list and unreliable when it writes
free text: it writes "N/A", copies the status as the reason, or gives a
result without its number. So code decides: a status outside the list, a
reason that says nothing (or only repeats the status), a key result with no
number, and any text the cited passage does not actually contain are
rejected and the field is left empty.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from apps.projects.models import Status

STATUSES = tuple(Status.values)
FIELDS = ("status", "reason", "next_steps", "blockers", "key_result")
LIST_FIELDS = ("next_steps", "blockers")
MAX_ITEMS = 8
MAX_TEXT = 400

# Words people write for a status, mapped onto the list (rules and
# frontmatter only; a model is asked for the list's words and held to them).
STATUS_WORDS = {
    "active": Status.ACTIVE,
    "in progress": Status.ACTIVE,
    "in-progress": Status.ACTIVE,
    "ongoing": Status.ACTIVE,
    "wip": Status.ACTIVE,
    "started": Status.ACTIVE,
    "doing": Status.ACTIVE,
    "paused": Status.PAUSED,
    "on hold": Status.PAUSED,
    "on-hold": Status.PAUSED,
    "parked": Status.PAUSED,
    "blocked": Status.BLOCKED,
    "stuck": Status.BLOCKED,
    "waiting": Status.BLOCKED,
    "done": Status.DONE,
    "complete": Status.DONE,
    "completed": Status.DONE,
    "finished": Status.DONE,
    "shipped": Status.DONE,
    "released": Status.DONE,
    "dropped": Status.DROPPED,
    "abandoned": Status.DROPPED,
    "cancelled": Status.DROPPED,
    "canceled": Status.DROPPED,
    "killed": Status.DROPPED,
    "idea": Status.IDEA,
    "planned": Status.IDEA,
    "proposed": Status.IDEA,
    "someday": Status.IDEA,
    "backlog": Status.IDEA,
}

_EMPTY_WORDS = {
    "n/a",
    "na",
    "n.a.",
    "none",
    "null",
    "nil",
    "unknown",
    "not stated",
    "not specified",
    "not mentioned",
    "not given",
    "no reason",
    "no reason given",
    "no reason stated",
    "not applicable",
    "-",
    "--",
    "—",
    "tbd",
    "?",
}

_STOP = frozenset(
    """a an and are as at be been but by for from has have i in is it its my of on or so
    that the their this to was were with will not no""".split()  # noqa: SIM905
)


@dataclass
class Field:
    """One filled-in field and the passage that says it."""

    value: str | list[str]
    origin: str  # "frontmatter" | "model" | "rules"
    ordinal: int | None = None  # the chunk of the note it came from (None: frontmatter)
    section: str = ""
    quote: str = ""
    private: bool = False  # the passage is in a private section

    def as_dict(self) -> dict:
        return {
            "value": self.value,
            "origin": self.origin,
            "ordinal": self.ordinal,
            "section": self.section,
            "quote": self.quote[:MAX_TEXT],
            "private": self.private,
        }


@dataclass
class Reading:
    """A note read into the form: the fields it states, and what was rejected."""

    fields: dict[str, Field] = field(default_factory=dict)
    rejected: list[str] = field(default_factory=list)

    def fill(self, other: Reading) -> None:
        """Take `other`'s fields where this reading has none."""
        for name, value in other.fields.items():
            self.fields.setdefault(name, value)
        self.rejected.extend(r for r in other.rejected if r not in self.rejected)


def clean_text(value) -> str:
    if not isinstance(value, str):
        return ""
    return " ".join(value.split())[:MAX_TEXT]


def status_from_words(text: str) -> str:
    """A status named in free text ("ABANDONED (do not reopen)", "on hold"), or ""."""
    words = re.sub(r"[^a-z/ -]+", " ", text.lower()).split()
    for size in (2, 1):
        for start in range(0, min(len(words), 4)):
            phrase = " ".join(words[start : start + size])
            if phrase in STATUS_WORDS:
                return STATUS_WORDS[phrase].value
    return ""


def status_from_list(value) -> str:
    """A model's status: exactly one of the list's words, or "" (rejected)."""
    text = clean_text(value).lower().strip(" .")
    return text if text in STATUSES else ""


def says_nothing(text: str) -> bool:
    return clean_text(text).lower().strip(" .!") in _EMPTY_WORDS


def only_repeats_status(text: str, status: str) -> bool:
    """A reason that is just the status again ("paused", "Status: paused")."""
    words = set(re.findall(r"[a-z]+", text.lower())) - {"status", "the", "is", "project"}
    status_words = {status} | {w for w, s in STATUS_WORDS.items() if s == status}
    return bool(words) and words <= status_words


def has_number(text: str) -> bool:
    return bool(re.search(r"\d", text))


def _content_words(text: str) -> list[str]:
    return [w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _STOP and len(w) > 1]


def grounded(value: str, passage: str, *, share: float = 0.75) -> bool:
    """Does `passage` say `value`? Most of the value's words must be in it,
    and every number exactly: a number the passage lacks was made up."""
    words = _content_words(value)
    if not words:
        return False
    haystack = set(_content_words(passage))
    numbers = re.findall(r"\d+(?:[.,]\d+)?", value)
    if any(n not in passage for n in numbers):
        return False
    return sum(1 for w in words if w in haystack) / len(words) >= share
