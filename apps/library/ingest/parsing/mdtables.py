"""Rows of cells as Markdown tables, cut into chunks that each repeat the
header row, so a passage found by search still says what its columns mean."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from .chunking import MAX_CHARS

MAX_CELL_CHARS = 300  # a cell holding a whole essay is cut; the table stays readable
_SPACE = re.compile(r"\s+")


def cell_text(value: object) -> str:
    """One cell as table text: whitespace folded, pipes escaped, length capped."""
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = _SPACE.sub(" ", str(value)).strip()
    if len(text) > MAX_CELL_CHARS:
        text = text[: MAX_CELL_CHARS - 1] + "…"
    return text.replace("\\", "\\\\").replace("|", "\\|")


def clean_rows(rows: Iterable[Sequence[object]]) -> list[list[str]]:
    """Cells as text, with empty rows dropped and trailing empty columns trimmed."""
    cleaned = [[cell_text(cell) for cell in row] for row in rows]
    cleaned = [row for row in cleaned if any(row)]
    width = max((max(i + 1 for i, c in enumerate(row) if c) for row in cleaned), default=0)
    return [row[:width] + [""] * (width - len(row[:width])) for row in cleaned]


def _line(row: Sequence[str]) -> str:
    return "| " + " | ".join(row) + " |"


def table_chunks(rows: list[list[str]], *, limit: int = MAX_CHARS) -> list[str]:
    """The first row is the header; the others are packed under it into
    chunks of at most about `limit` characters (a single very wide row may
    exceed it: it is never cut in two)."""
    if not rows:
        return []
    header = _line(rows[0]) + "\n" + _line(["---"] * len(rows[0]))
    if len(rows) == 1:
        return [header]
    chunks: list[str] = []
    current = header
    for row in rows[1:]:
        line = _line(row)
        if current != header and len(current) + 1 + len(line) > limit:
            chunks.append(current)
            current = header
        current = f"{current}\n{line}"
    chunks.append(current)
    return chunks
