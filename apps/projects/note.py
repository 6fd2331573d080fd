"""A project note as the readers see it: its passages in reading order (the
library's chunks, private sections included: the registry is read for the
note's owner, by code or by their local model, plus the headings that have
no text of their own, such as "## Status: DONE" right before another
heading) and its frontmatter, read again from the file because the library
keeps only scalar frontmatter values.

Passages are numbered 1…n in reading order; that number is what a model
cites. A passage that is a chunk keeps the chunk's ordinal, so a field can
link to it (stable while the note is unchanged)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import yaml

from apps.library.models import Document
from apps.library.selectors import BREADCRUMB_SEPARATOR as SEPARATOR
from apps.library.selectors import indexed_note_text, section_breadcrumbs, split_frontmatter

logger = logging.getLogger(__name__)

MAX_NOTE_BYTES = 1024 * 1024


@dataclass(frozen=True)
class Passage:
    number: int  # 1…n in reading order: what the model cites
    ordinal: int | None  # the chunk's ordinal; None for a heading with no text
    section: str
    text: str
    private: bool


@dataclass
class Note:
    document: Document
    title: str
    passages: list[Passage]
    frontmatter: dict = field(default_factory=dict)

    def passage(self, number) -> Passage | None:
        if isinstance(number, bool) or not isinstance(number, int):
            return None
        return self.passages[number - 1] if 1 <= number <= len(self.passages) else None


def _frontmatter(text: str) -> dict:
    raw, _ = split_frontmatter(text)
    if raw is None:
        return {}
    try:
        parsed = yaml.safe_load(raw)  # safe_load only: frontmatter is untrusted
    except yaml.YAMLError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def load_note(document: Document) -> Note:
    chunks = [
        c
        for c in document.chunks.order_by("ordinal").only(
            "ordinal", "section", "text", "private", "annotation"
        )
        if not c.annotation
    ]
    # The file as indexed (None once it changed on disk: the next sync and refresh catch up).
    text = indexed_note_text(document, max_bytes=MAX_NOTE_BYTES)
    rows: list[tuple[int | None, str, str, bool]] = []
    by_section: dict[str, list] = {}
    for chunk in chunks:
        by_section.setdefault(chunk.section, []).append(chunk)
    order = [("", False), *section_breadcrumbs(text)] if text is not None else []
    placed: set[str] = set()
    for section, private in order:
        if section in placed:
            continue
        placed.add(section)
        if section in by_section:
            rows += [(c.ordinal, c.section, c.text, c.private) for c in by_section[section]]
        elif section and not any(s.startswith(section + SEPARATOR) for s in by_section):
            # A heading no chunk carries, not even in a subsection's breadcrumb.
            rows.append((None, section, "", private))
    # Chunks whose section the file no longer names (never expected): kept, at the end.
    rows += [(c.ordinal, c.section, c.text, c.private) for c in chunks if c.section not in placed]
    passages = [
        Passage(number=n, ordinal=o, section=s, text=t, private=p)
        for n, (o, s, t, p) in enumerate(rows, start=1)
    ]
    return Note(
        document=document,
        title=document.title,
        passages=passages,
        frontmatter=_frontmatter(text) if text is not None else {},
    )
