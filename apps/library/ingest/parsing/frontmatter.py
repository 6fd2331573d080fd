"""YAML frontmatter → record fields.

Frontmatter is untrusted: a note can arrive in a vault from anywhere. Parsing
uses `yaml.safe_load` only; a malformed block costs the note its filters, never
its place in the index. Well-known keys become named fields (the axes worth a
filter); every other scalar is kept as `x_<key>`, so a key such as `sharing` or
`owner` lands in `x_sharing` and can never reclassify the note. Jarvis writes
its own fields separately, after these.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime

import yaml

from apps.library.ingest.parsing.types import RecordFields

_BLOCK = re.compile(r"\A\ufeff?---[ \t]*\r?\n(.*?)\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.S)

CATEGORY_KEYS = ("type", "category")
STATUS_KEYS = ("status",)
ENTITY_KEYS = ("entity", "org", "organisation", "organization", "company")
DATE_KEYS = ("date", "applied", "event_date")
TAG_KEYS = ("tags", "tag")
TITLE_KEYS = ("title",)
# Other names of the note (Obsidian's `aliases`, a list or one string) and its
# summary: both are searched like the title (apps.library.index.fts.title_text).
ALIAS_KEYS = ("aliases", "alias")
DESCRIPTION_KEYS = ("description", "summary")
ALIASES_FIELD = "x_aliases"
DESCRIPTION_FIELD = "x_description"
LIST_SEPARATOR = "; "
MAX_ALIASES = 20
PRIVATE_SECTIONS_KEY = "private_sections"

MAX_TAGS = 50
MAX_SCALAR = 500


@dataclass
class Frontmatter:
    record: RecordFields
    title: str = ""
    date: date | None = None  # from `date:` only: it also dates the document
    body: str = ""
    # Headings whose sections are private (owner-only, local-only); lower-cased.
    private_sections: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def split_frontmatter(text: str) -> tuple[str | None, str]:
    match = _BLOCK.match(text)
    if not match:
        return None, text
    return match.group(1), text[match.end() :]


def _as_date(value) -> date | None:
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if isinstance(value, str):
        try:
            return date.fromisoformat(value.strip()[:10])
        except ValueError:
            return None
    return None


def _scalar(value) -> str | int | float | bool | None:
    if isinstance(value, bool | int | float):
        return value
    if isinstance(value, date | datetime):
        return value.isoformat()
    if isinstance(value, str):
        return value.strip()[:MAX_SCALAR]
    return None


def _tags(value) -> list[str]:
    if isinstance(value, str):
        items = re.split(r"[,\s]+", value)
    elif isinstance(value, list):
        items = [str(v) for v in value if isinstance(v, str | int | float)]
    else:
        return []
    cleaned = []
    for item in items:
        tag = item.strip().lstrip("#").strip().lower()
        if tag and tag not in cleaned:
            cleaned.append(tag[:100])
    return cleaned[:MAX_TAGS]


def _aliases(value) -> list[str]:
    if isinstance(value, str):
        items = [value]
    elif isinstance(value, list):
        items = [str(v) for v in value if isinstance(v, str | int | float)]
    else:
        return []
    cleaned: list[str] = []
    for item in items:
        alias = " ".join(item.split())[:200]
        if alias and alias not in cleaned:
            cleaned.append(alias)
    return cleaned[:MAX_ALIASES]


def _scalar_list(value) -> str | None:
    """A list of plain values (`cssclasses: [wide]`) as one string; None for
    anything nested deeper."""
    if not isinstance(value, list) or not all(
        isinstance(v, str | int | float | bool) for v in value
    ):
        return None
    return LIST_SEPARATOR.join(str(v).strip() for v in value if str(v).strip())[:MAX_SCALAR]


def _section_names(value) -> list[str]:
    """`private_sections: [Health, Money]` or `private_sections: Health, Money`."""
    if isinstance(value, str):
        items = value.split(",")
    elif isinstance(value, list):
        items = [str(v) for v in value if isinstance(v, str | int | float)]
    else:
        return []
    return [" ".join(item.split()).lower()[:200] for item in items if item.strip()][:MAX_TAGS]


def _key_name(key) -> str:
    name = re.sub(r"[^0-9a-zA-Z_]+", "_", str(key)).strip("_").lower()
    return name[:60] or "key"


def parse_frontmatter(text: str) -> Frontmatter:
    raw, body = split_frontmatter(text)
    result = Frontmatter(record=RecordFields(), body=body)
    if raw is None:
        return result
    try:
        data = yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 2})" if mark is not None else ""
        result.warnings.append(f"frontmatter is not valid YAML{where}; indexed the body only")
        return result
    if data is None:
        return result
    if not isinstance(data, dict):
        result.warnings.append("frontmatter is not a key: value mapping; ignored")
        return result

    record = result.record
    for key, value in data.items():
        name = _key_name(key)
        if name in TAG_KEYS:
            record.tags.extend(t for t in _tags(value) if t not in record.tags)
            continue
        if name in ALIAS_KEYS:
            aliases = _aliases(value)
            if aliases:
                record.extra[ALIASES_FIELD] = LIST_SEPARATOR.join(aliases)[:MAX_SCALAR]
            continue
        if name in DESCRIPTION_KEYS and isinstance(value, str) and value.strip():
            record.extra[DESCRIPTION_FIELD] = " ".join(value.split())[:MAX_SCALAR]
            continue
        if name == PRIVATE_SECTIONS_KEY:
            result.private_sections.extend(_section_names(value))
            continue
        if name in DATE_KEYS:
            parsed = _as_date(value)
            if parsed and record.event_date is None:
                record.event_date = parsed
            if name == "date" and parsed:
                result.date = parsed
            if parsed:
                continue
        scalar = _scalar(value)
        if scalar is None:
            scalar = _scalar_list(value)
        if scalar is None:
            if value is not None:
                result.warnings.append(f"frontmatter key {name!r} is nested; skipped")
            continue
        if name in TITLE_KEYS and isinstance(scalar, str):
            result.title = scalar
        elif name in CATEGORY_KEYS and not record.category:
            record.category = str(scalar).lower()
        elif name in STATUS_KEYS and not record.status:
            record.status = str(scalar).lower()
        elif name in ENTITY_KEYS and not record.entity:
            record.entity = str(scalar)
        else:
            record.extra[f"x_{name}"] = scalar
    return result
