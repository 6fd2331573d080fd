"""Reading a project note with the owner's local model: strict JSON, checked
field by field by code (apps.projects.form). The model only says what the
note states and which numbered passage states it; code decides what is kept.

Only a local model reads notes for the registry: a project note may hold
private sections and local-only text, and the registry is built in the
background where no one chose a model for it.
"""

from __future__ import annotations

import json
import re

from asgiref.sync import async_to_sync

from apps.instance.models import ModelEntry
from apps.llm import ProviderConfig, TextDelta, stream_chat
from apps.llm.selectors import default_model_for, models_for
from apps.projects.form import (
    FIELDS,
    LIST_FIELDS,
    MAX_ITEMS,
    STATUSES,
    Field,
    Reading,
    clean_text,
    grounded,
    has_number,
    only_repeats_status,
    says_nothing,
    status_from_list,
)
from apps.projects.note import Note, Passage

MAX_NOTE_CHARS = 12_000

SYSTEM = f"""\
You read one project note and fill in a fixed form. Reply with one JSON object and \
nothing else, exactly these keys:
{{"status": {{"value": "<one of: {", ".join(STATUSES)}>", "passage": <number>}} or null,
 "reason": {{"value": "<why the project has this status, in the note's words>", \
"passage": <number>}} or null,
 "next_steps": [{{"value": "<a next step>", "passage": <number>}}],
 "blockers": [{{"value": "<what blocks it>", "passage": <number>}}],
 "key_result": {{"value": "<the main result, with its number>", "passage": <number>}} or null}}
"passage" is the number in square brackets of the passage that states the value.
Use null or [] for anything the note does not state. Never guess, never write "N/A", \
never repeat the status as the reason. Abandoned or cancelled projects are "dropped"; \
finished ones are "done"; projects on hold are "paused".
"""


class ModelUnusable(Exception):
    """The model's reply was not the JSON asked for (or the call failed)."""


def reading_model_for(user) -> ModelEntry | None:
    """The person's local model for reading notes: their default when it is
    local, else the first local model they may use; None when they have none."""
    default = default_model_for(user=user)
    if default is not None and not default.is_cloud:
        return default
    return next((m for m in models_for(user=user) if not m.is_cloud), None)


def note_prompt(note: Note) -> str:
    lines = [f"Project note “{note.title}” ({note.document.path})", ""]
    used = 0
    for passage in note.passages:
        block = f"[{passage.number}] {passage.section}\n{passage.text}".strip()
        if used + len(block) > MAX_NOTE_CHARS:
            break
        lines.append(block)
        used += len(block)
    return "\n\n".join(lines)


async def _collect(config: ProviderConfig, text: str) -> str:
    parts: list[str] = []
    turns = [{"role": "user", "blocks": [{"type": "text", "text": text}]}]
    async for event in stream_chat(config, system=SYSTEM, turns=turns, tools=[]):
        if isinstance(event, TextDelta):
            parts.append(event.text)
    return "".join(parts)


def ask_model(config: ProviderConfig, note: Note) -> str:
    return async_to_sync(_collect)(config, note_prompt(note))


def parse_reply(reply: str) -> dict:
    """The JSON object in the reply (a ```json fence around it is tolerated)."""
    text = re.sub(r"^\s*```(?:json)?\s*|\s*```\s*$", "", reply.strip())
    start, end = text.find("{"), text.rfind("}")
    if start == -1 or end <= start:
        raise ModelUnusable("the reply holds no JSON object")
    try:
        data = json.loads(text[start : end + 1])
    except json.JSONDecodeError as exc:
        raise ModelUnusable(f"the reply is not valid JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise ModelUnusable("the reply is not a JSON object")
    return data


def _cited(note: Note, entry) -> tuple[str, Passage | None]:
    if not isinstance(entry, dict):
        return "", None
    return clean_text(entry.get("value")), note.passage(entry.get("passage"))


def _field(value, passage: Passage) -> Field:
    return Field(
        value=value,
        origin="model",
        ordinal=passage.ordinal,
        section=passage.section,
        quote=clean_text(passage.text or passage.section),
        private=passage.private,
    )


def _check_text(name: str, value: str, passage: Passage | None, status: str) -> str:
    """Why `value` cannot be kept for `name` ("" when it can)."""
    if not value or says_nothing(value):
        return f"{name}: says nothing ({value!r})"
    if passage is None:
        return f"{name}: cites no passage of the note"
    if name == "reason" and only_repeats_status(value, status):
        return f"reason: only repeats the status ({value!r})"
    if name == "key_result" and not has_number(value):
        return f"key_result: has no number ({value!r})"
    if not grounded(value, f"{passage.section}\n{passage.text}"):
        return f"{name}: passage [{passage.number}] does not say {value!r}"
    return ""


def validate(note: Note, data: dict) -> Reading:
    """Keep what the checks accept; say why for the rest."""
    reading = Reading()
    for key in data:
        if key not in FIELDS:
            reading.rejected.append(f"{clean_text(str(key))[:40]}: not a field of the form")
    value, passage = _cited(note, data.get("status"))
    status = status_from_list(value)
    if data.get("status") is not None and not status:
        reading.rejected.append(f"status: {value!r} is not one of {', '.join(STATUSES)}")
    elif status and passage is None:
        reading.rejected.append("status: cites no passage of the note")
        status = ""
    elif status:
        reading.fields["status"] = _field(status, passage)
    for name in ("reason", "key_result"):
        if data.get(name) is None:
            continue
        value, passage = _cited(note, data.get(name))
        problem = _check_text(name, value, passage, status)
        if problem:
            reading.rejected.append(problem)
        else:
            reading.fields[name] = _field(value, passage)
    for name in LIST_FIELDS:
        entries = data.get(name) or []
        if not isinstance(entries, list):
            reading.rejected.append(f"{name}: not a list")
            continue
        kept: list[tuple[str, Passage]] = []
        for entry in entries[: MAX_ITEMS * 2]:
            value, passage = _cited(note, entry)
            problem = _check_text(name, value, passage, status)
            if problem:
                reading.rejected.append(problem)
            elif value not in [v for v, _ in kept]:
                kept.append((value, passage))
        if kept:
            field = _field([v for v, _ in kept[:MAX_ITEMS]], kept[0][1])
            # One item from a private section makes the whole list its owner's.
            field.private = any(p.private for _, p in kept[:MAX_ITEMS])
            reading.fields[name] = field
    return reading


def read_by_model(note: Note, config: ProviderConfig) -> Reading:
    """Ask, then validate. ModelUnusable when the reply is not the JSON asked for."""
    return validate(note, parse_reply(ask_model(config, note)))
