"""A PDF page's annotations as passages: highlights, underlines and the like
with the words they cover, and notes (sticky notes, free-text boxes) with
what they say. They come first in a document because they are what the person
chose to keep (pdf.py)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import pymupdf

from .figures import MUPDF_ERRORS
from .types import ChunkDraft

# Ligatures ("ﬁ") are expanded so keyword search finds "file". These flags also
# leave images out, which cost time and carry no text.
TEXT_FLAGS = pymupdf.TEXTFLAGS_TEXT & ~pymupdf.TEXT_PRESERVE_LIGATURES
_MARKUP_KINDS: dict[int, str] = {
    pymupdf.PDF_ANNOT_HIGHLIGHT: "highlight",
    pymupdf.PDF_ANNOT_UNDERLINE: "underline",
    pymupdf.PDF_ANNOT_SQUIGGLY: "squiggly",
    pymupdf.PDF_ANNOT_STRIKE_OUT: "strikeout",
}
_NOTE_TYPES = (pymupdf.PDF_ANNOT_TEXT, pymupdf.PDF_ANNOT_FREE_TEXT)
_WHITESPACE = re.compile(r"\s+")


def clean(text: str) -> str:
    """`text` on one line, runs of white space as one space."""
    return _WHITESPACE.sub(" ", text).strip()


def annotation_chunks(page: pymupdf.Page, number: int) -> list[ChunkDraft]:
    # first_annot is a cheap check that avoids building the annotation list on
    # the vast majority of pages, which have none.
    if page.first_annot is None:
        return []
    annots = sorted(
        page.annots(types=(*_MARKUP_KINDS, *_NOTE_TYPES)),
        key=lambda annot: (round(annot.rect.y0), annot.rect.x0),
    )
    words: list[tuple] | None = None
    chunks: list[ChunkDraft] = []
    for annot in annots:
        annot_type = annot.type[0]
        comment = clean(annot.info.get("content") or "")
        if annot_type == pymupdf.PDF_ANNOT_FREE_TEXT and not comment:
            comment = _appearance_text(annot)
        if annot_type in _NOTE_TYPES:
            if comment:
                chunks.append(_annotation_chunk(f"[NOTE p.{number}] {comment}", number, "note"))
            continue
        if words is None:
            words = page.get_text("words", flags=TEXT_FLAGS)
        chunk = _markup_chunk(annot, _MARKUP_KINDS[annot_type], words, comment, number)
        if chunk is not None:
            chunks.append(chunk)
    return chunks


def _appearance_text(annot: pymupdf.Annot) -> str:
    """The words a free-text box draws. Some writers give the box an
    appearance stream but no /Contents; what it shows is still the note (and
    its area is left out of the body text, so it would otherwise be lost)."""
    try:
        return clean(annot.get_text("text"))
    except MUPDF_ERRORS:
        return ""


def _markup_chunk(
    annot: pymupdf.Annot, kind: str, words: list[tuple], comment: str, number: int
) -> ChunkDraft | None:
    covered = covered_text(words, _annot_quads(annot))
    # Some viewers copy the highlighted text into the comment; repeating it adds nothing.
    if comment == covered:
        comment = ""
    if not covered and not comment:
        return None
    text = f"[{kind.upper()} p.{number}]"
    if covered:
        text += f" {covered}"
    if comment:
        text += f" — note: {comment}"
    return _annotation_chunk(text, number, kind)


def centre_inside(bbox: Sequence[float], areas: Sequence[pymupdf.Rect | pymupdf.Quad]) -> bool:
    centre = pymupdf.Point((bbox[0] + bbox[2]) / 2, (bbox[1] + bbox[3]) / 2)
    return any(centre in area for area in areas)


def _annotation_chunk(text: str, number: int, kind: str) -> ChunkDraft:
    return ChunkDraft(text=text, section=f"Page {number}", page=number, annotation=kind)


def _annot_quads(annot: pymupdf.Annot) -> list[pymupdf.Quad]:
    vertices = annot.vertices or []
    quads = [pymupdf.Quad(*vertices[i : i + 4]) for i in range(0, len(vertices) - 3, 4)]
    # A markup annotation without QuadPoints is described by its rectangle alone.
    return quads or [annot.rect.quad]


def covered_text(words: Iterable[tuple], quads: list[pymupdf.Quad]) -> str:
    """The words whose bounding-box centre lies inside any quad, in reading order.

    The centre test tolerates quads that are slightly smaller or larger than
    the glyphs, as drawn by hand in viewers, without catching the neighbours.
    """
    # Quads rather than their bounding rects, so rotated or skewed text is not
    # over-collected.
    hits = [word for word in words if centre_inside(word, quads)]
    # Words are extracted in (block, line, word) order, which is reading order,
    # so filtering them keeps it whatever order the quads were drawn in.
    return clean(" ".join(word[4] for word in hits))
