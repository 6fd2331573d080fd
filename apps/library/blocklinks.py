"""Obsidian block ids on the document page: each block a passage holds gets
an anchor (`id="^b15695"`, so `…/doc/7/#^b15695` scrolls to it), and a link
to a block (`[[Note#^b15695|the boiler]]`) becomes a link to that anchor of
the note's page.

A link resolves as an embed does (apps.library.ingest.embeds.note_path: the
same collection, Obsidian's rules for a bare name) and only to a document the
viewer may read; otherwise its words stay plain text, as every other link
does, so a link into someone's private note says nothing about it. A block id
the viewer cannot see there (none such, or in a private section) links to the
note's page without an anchor.
"""

from __future__ import annotations

from django.urls import reverse

from apps.core.markdown import render_markdown
from apps.library.ingest.embeds import note_path
from apps.library.ingest.parsing.blocks import is_block_id
from apps.library.models import Chunk, Document
from apps.library.selectors import chunks_visible_to, visible_to


def _shift(chunk: Chunk) -> int:
    """How much of the passage's text its shown form leaves out at the start
    (the overlap with the passage before: `shown` is a suffix of `text`)."""
    shown = getattr(chunk, "shown", chunk.text)
    return len(chunk.text) - len(shown) if chunk.text.endswith(shown) else 0


# Distinct (note, block) links resolved on one page (a few queries each);
# those past it stay words, like a link to nothing.
MAX_RESOLVED = 100


class _Resolver:
    """Block links of one page, resolved once per (target, block) for one viewer."""

    def __init__(self, user, document: Document) -> None:
        self.user = user
        self.document = document
        self.paths = list(document.files.values_list("path", flat=True)[:1])
        self.cache: dict[tuple[str, str], str | None] = {}

    def href(self, target: str, block: str) -> str | None:
        key = (target, block)
        if key not in self.cache:
            if len(self.cache) >= MAX_RESOLVED:
                return None
            self.cache[key] = self._href(target, block)
        return self.cache[key]

    def _href(self, target: str, block: str) -> str | None:
        if not self.paths or not target.strip():
            return None
        source = self.document.source
        path = note_path(source, self.paths[0], target)
        if path is None:
            return None
        found = (
            visible_to(self.user)
            .filter(files__source=source, files__path=path, status=Document.Status.READY)
            .select_related("source")
            .first()
        )
        if found is None:
            return None
        page = reverse("library:document", args=[found.pk])
        shown = chunks_visible_to(self.user, found).filter(marks__anchors__has_key=block)
        return f"{page}#^{block}" if shown.exists() else page


def _anchors(chunk: Chunk, shift: int, placed: set[str]) -> list[tuple[int, str]]:
    """The passage's anchors, each id once on the page (`placed`: ids already there)."""
    found = []
    for block, offset in ((chunk.marks or {}).get("anchors") or {}).items():
        wanted = is_block_id(block) and isinstance(offset, int) and offset >= shift
        if wanted and block not in placed:
            placed.add(block)
            found.append((offset - shift, f"^{block}"))
    return found


def _links(chunk: Chunk, shift: int, resolver: _Resolver) -> list[tuple[int, int, str]]:
    placed = []
    for row in (chunk.marks or {}).get("links") or []:
        if not (isinstance(row, list) and len(row) == 4):
            continue
        start, end, target, block = row
        if not (isinstance(start, int) and isinstance(end, int) and start >= shift):
            continue
        if not (isinstance(target, str) and isinstance(block, str) and is_block_id(block)):
            continue
        href = resolver.href(target, block)
        if href is not None:
            placed.append((start - shift, end - shift, href))
    return placed


def passages_html(user, document: Document, chunks: list[Chunk]) -> None:
    """Set `html` on each passage: its shown text as the page renders it,
    with its block anchors and its links to blocks."""
    resolver = _Resolver(user, document)
    placed: set[str] = set()
    for chunk in chunks:
        shown = getattr(chunk, "shown", chunk.text)
        if not chunk.marks:
            chunk.html = render_markdown(shown)
            continue
        shift = _shift(chunk)
        chunk.html = render_markdown(
            shown, anchors=_anchors(chunk, shift, placed), links=_links(chunk, shift, resolver)
        )
