"""The form's fields a note states in its frontmatter, taken as they are
(a status must still name one of the list's statuses)."""

from __future__ import annotations

import re

from apps.projects.form import (
    LIST_FIELDS,
    MAX_ITEMS,
    Field,
    Reading,
    clean_text,
    says_nothing,
    status_from_words,
)
from apps.projects.note import Note

KEYS = {
    "status": ("status", "state"),
    "reason": ("reason", "status_reason", "why"),
    "next_steps": ("next_steps", "next", "next_step", "todo"),
    "blockers": ("blockers", "blocker", "blocked_by"),
    "key_result": ("key_result", "result", "metric", "key_metric"),
}
NAME_KEYS = ("name", "project")
_NAME_CUT = re.compile(r"\s+[—–-]\s+|:\s+")


def _key(name) -> str:
    return re.sub(r"[^0-9a-z_]+", "_", str(name).lower()).strip("_")


def _text(value) -> str:
    if isinstance(value, bool) or value is None or isinstance(value, dict | list):
        return ""
    return clean_text(str(value))


def _items(value) -> list[str]:
    values = value if isinstance(value, list) else [value]
    items = [_text(v) for v in values]
    return [i for i in items if i and not says_nothing(i)][:MAX_ITEMS]


def project_name(note: Note) -> str:
    """The frontmatter's name, else the title up to a dash or colon
    ("DataLens — CSV Analysis Tool" is DataLens)."""
    data = {_key(k): v for k, v in note.frontmatter.items()}
    for key in NAME_KEYS:
        name = _text(data.get(key))
        if name:
            return name[:200]
    title = clean_text(note.title)
    head = _NAME_CUT.split(title, maxsplit=1)[0].strip()
    return (head if 0 < len(head) <= 80 else title)[:200] or "Untitled project"


def read_frontmatter(note: Note) -> Reading:
    reading = Reading()
    data = {_key(k): v for k, v in note.frontmatter.items()}
    for field_name, keys in KEYS.items():
        raw = next((data[k] for k in keys if k in data), None)
        if raw is None:
            continue
        if field_name in LIST_FIELDS:
            value = _items(raw)
        elif field_name == "status":
            value = status_from_words(_text(raw))
            if not value:
                reading.rejected.append(
                    f"frontmatter status {_text(raw)!r} is not one of the statuses"
                )
        else:
            value = _text(raw)
            value = "" if says_nothing(value) else value
        if value:
            reading.fields[field_name] = Field(value=value, origin="frontmatter")
    return reading
