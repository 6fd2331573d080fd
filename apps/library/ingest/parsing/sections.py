"""Building chunks from a document read block by block (headings, paragraphs,
tables), as word processors' files are: headings open sections with a
breadcrumb, text under one heading is packed like a Markdown section, and each
table becomes Markdown table chunks that repeat their header row."""

from __future__ import annotations

from dataclasses import dataclass, field

from .chunking import pack_text
from .markdown import BREADCRUMB_SEPARATOR
from .mdtables import table_chunks
from .types import ChunkDraft

MAX_HEADING_CHARS = 200


@dataclass
class SectionWriter:
    chunks: list[ChunkDraft] = field(default_factory=list)
    title: str = ""  # the first heading of level 0 ("Title" style), if any
    _path: list[tuple[int, str]] = field(default_factory=list)
    _lines: list[str] = field(default_factory=list)
    _headings: list[str] = field(default_factory=list)  # every one, the title too

    @property
    def section(self) -> str:
        return BREADCRUMB_SEPARATOR.join(text for _, text in self._path)

    def heading(self, level: int, text: str) -> None:
        text = " ".join(text.split())[:MAX_HEADING_CHARS]
        if not text:
            return
        self.flush()
        self._headings.append(text)
        if level <= 0:
            if not self.title:
                self.title = text
                return
            level = 1
        while self._path and self._path[-1][0] >= level:
            self._path.pop()
        self._path.append((level, text))

    def paragraph(self, text: str) -> None:
        text = text.strip()
        if text:
            self._lines.append(text)

    def table(self, rows: list[list[str]]) -> None:
        if not rows:
            return
        self.flush()
        self.chunks.extend(ChunkDraft(text=t, section=self.section) for t in table_chunks(rows))

    def flush(self) -> None:
        if self._lines:
            body = "\n\n".join(self._lines)
            self.chunks.extend(ChunkDraft(text=t, section=self.section) for t in pack_text(body))
            self._lines = []

    def finish(self) -> list[ChunkDraft]:
        self.flush()
        if not self.chunks and self._headings:
            # Headings and nothing under them (a cover page, an outline still
            # to be filled in): their words are the document's only text.
            self.chunks.append(ChunkDraft(text="\n\n".join(self._headings)))
        return self.chunks
