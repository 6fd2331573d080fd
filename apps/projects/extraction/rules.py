"""Reading a project note by rules alone (no model configured, or a field the
model left empty): only what the note states in a recognisable place.

- status: a "Status: …" heading or line, or the first line under a "Status" heading;
- reason: the text under a "Why paused/abandoned/…" or "Reason" heading, or a "Reason: …" line;
- next steps, blockers: the list items under "Next steps"/"What's left"/"Todo",
  "Blockers"/"Blocked by" headings (or a "Blocked by: …" line);
- key result: the first item with a number under "Key numbers"/"Results"/"Metrics",
  or a "Key result: …" line with a number.
"""

from __future__ import annotations

import re

from apps.library.selectors import BREADCRUMB_SEPARATOR
from apps.projects.form import (
    MAX_ITEMS,
    Field,
    Reading,
    clean_text,
    has_number,
    only_repeats_status,
    says_nothing,
    status_from_words,
)
from apps.projects.note import Note, Passage

_STATUS_LINE = re.compile(r"^\W*status\W*[:\-–—]\s*(.+)$", re.I)
_REASON_HEADING = re.compile(
    r"^(why\b.*\b(paused|abandoned|dropped|blocked|stopped|on hold|parked|cancell?ed|killed|"
    r"stuck|shelved)\b.*|reasons?\b.*)$",
    re.I,
)
_REASON_LINE = re.compile(r"^\W*(reason|why)\W*[:\-–—]\s*(.+)$", re.I)
_NEXT_HEADING = re.compile(
    r"^(next steps?|next|what'?s left|what is left|to ?dos?|remaining( work)?|upcoming)\b", re.I
)
_BLOCKER_HEADING = re.compile(r"^(blockers?|blocked (by|on)|obstacles?|open issues)\b", re.I)
_BLOCKER_LINE = re.compile(r"^\W*(?:blocked (?:by|on)|blockers?)\W*[:\-–—]\s*(?P<text>.+)$", re.I)
_RESULT_HEADING = re.compile(
    r"^(key (numbers?|results?|metrics?|figures?)|results?|metrics?|outcomes?|numbers)\b", re.I
)
_RESULT_LINE = re.compile(
    r"^\W*(key result|final result|result|key metric|metric)\W*[:\-–—]\s*(.+)$", re.I
)
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[( |x|X)\]\s+)?(.+)$")


def _headings(passage: Passage) -> list[str]:
    return [h.strip() for h in passage.section.split(BREADCRUMB_SEPARATOR) if h.strip()]


def _lines(passage: Passage) -> list[str]:
    # A chunk that continues its section starts with the previous one's tail ("… ").
    return [line for line in passage.text.splitlines() if not line.startswith("…")]


def _field(value, passage: Passage, quote: str) -> Field:
    return Field(
        value=value,
        origin="rules",
        ordinal=passage.ordinal,
        section=passage.section,
        quote=clean_text(quote),
        private=passage.private,
    )


def _items(passage: Passage) -> list[str]:
    items = []
    for line in _lines(passage):
        match = _ITEM.match(line)
        if match and match.group(1) not in ("x", "X"):  # a ticked box is done, not next
            text = clean_text(match.group(2))
            if text and not says_nothing(text):
                items.append(text)
    return items


def _status(note: Note) -> Field | None:
    for passage in note.passages:
        headings = _headings(passage)
        for heading in headings:
            match = _STATUS_LINE.match(heading)
            if match and (status := status_from_words(match.group(1))):
                return _field(status, passage, heading)
        if headings and headings[-1].lower() == "status":
            first = next((line for line in _lines(passage) if line.strip()), "")
            if status := status_from_words(first):
                return _field(status, passage, first)
        for line in _lines(passage):
            match = _STATUS_LINE.match(line)
            if match and (status := status_from_words(match.group(1))):
                return _field(status, passage, line)
    return None


def _reason(note: Note, status: str) -> Field | None:
    for passage in note.passages:
        headings = _headings(passage)
        if headings and _REASON_HEADING.match(headings[-1]):
            items = _items(passage)
            text = "; ".join(items) if items else clean_text(" ".join(_lines(passage)))
            if text and not says_nothing(text) and not only_repeats_status(text, status):
                return _field(clean_text(text)[:300], passage, passage.text)
        for line in _lines(passage):
            match = _REASON_LINE.match(line)
            if match:
                text = clean_text(match.group(2))
                if text and not says_nothing(text) and not only_repeats_status(text, status):
                    return _field(text, passage, line)
    return None


def _listed(note: Note, heading: re.Pattern, line_pattern: re.Pattern | None) -> Field | None:
    found: list[tuple[str, Passage]] = []
    for passage in note.passages:
        headings = _headings(passage)
        if headings and heading.match(headings[-1]):
            found.extend((item, passage) for item in _items(passage))
        elif line_pattern is not None:
            for line in _lines(passage):
                match = line_pattern.match(line)
                text = clean_text(match.group("text")) if match else ""
                if text and not says_nothing(text):
                    found.append((text, passage))
    items: list[str] = []
    passages: list[Passage] = []
    for text, passage in found:
        if text not in items and len(items) < MAX_ITEMS:
            items.append(text)
            passages.append(passage)
    if not items:
        return None
    field = _field(items, passages[0], passages[0].text)
    # One item from a private section makes the whole list its owner's.
    field.private = any(p.private for p in passages)
    return field


def _key_result(note: Note) -> Field | None:
    for passage in note.passages:
        headings = _headings(passage)
        if headings and _RESULT_HEADING.match(headings[-1]):
            for item in _items(passage):
                if has_number(item):
                    return _field(item, passage, item)
        for line in _lines(passage):
            match = _RESULT_LINE.match(line)
            if match and has_number(match.group(2)):
                return _field(clean_text(match.group(2)), passage, line)
    return None


def read_by_rules(note: Note) -> Reading:
    reading = Reading()
    status = _status(note)
    found = {
        "status": status,
        "reason": _reason(note, status.value if status else ""),
        "next_steps": _listed(note, _NEXT_HEADING, None),
        "blockers": _listed(note, _BLOCKER_HEADING, _BLOCKER_LINE),
        "key_result": _key_result(note),
    }
    reading.fields = {name: value for name, value in found.items() if value is not None}
    return reading
