"""Presentations (.pptx) with python-pptx: one section per slide ("Slide 3 ·
Budget"), its text boxes in reading order (top to bottom, left to right, into
groups), its tables as Markdown tables, and the speaker notes, which often
say more than the slide."""

from __future__ import annotations

import io

import pptx
from pptx.enum.shapes import MSO_SHAPE_TYPE
from pptx.shapes.base import BaseShape

from .archives import as_readable, open_checked, reading
from .chunking import pack_text
from .mdtables import clean_rows, table_chunks
from .types import ChunkDraft, ParsedDocument, UnreadableDocument

WHAT = "presentation"
MAX_SLIDES = 1_000
MAX_SHAPES_PER_SLIDE = 2_000  # counted into groups too
MAX_TABLE_ROWS = 500


def extract_pptx(data: bytes, *, filename: str, fallback_title: str) -> ParsedDocument:
    open_checked(data, what=WHAT).close()
    warnings: list[str] = []
    chunks: list[ChunkDraft] = []
    with reading(WHAT):
        presentation = pptx.Presentation(io.BytesIO(as_readable(data)))
        slides = list(presentation.slides)
        if len(slides) > MAX_SLIDES:
            warnings.append(f"only the first {MAX_SLIDES:,} of {len(slides):,} slides were read")
        first_title = ""
        for number, slide in enumerate(slides[:MAX_SLIDES], start=1):
            title = _title(slide)
            first_title = first_title or title
            section = f"Slide {number}" + (f" · {title}" if title else "")
            texts, tables = _slide_content(slide, skip_title=bool(title))
            body = "\n\n".join(texts)
            if slide.has_notes_slide:
                notes = slide.notes_slide.notes_text_frame
                if notes is not None and notes.text.strip():
                    body += f"\n\nSpeaker notes: {notes.text.strip()}"
            chunks.extend(
                ChunkDraft(text=piece, section=section, page=number) for piece in pack_text(body)
            )
            for rows in tables:
                chunks.extend(
                    ChunkDraft(text=piece, section=section, page=number)
                    for piece in table_chunks(rows)
                )
            if title and not body.strip() and not tables:
                chunks.append(ChunkDraft(text=title, section=section, page=number))
        core_title = (presentation.core_properties.title or "").strip()
        authors = (presentation.core_properties.author or "").strip()
    if not chunks:
        raise UnreadableDocument(
            "the presentation has no text on its slides or in its notes (pictures, charts "
            "and SmartArt are not read)"
        )
    return ParsedDocument(
        title=(core_title or first_title or fallback_title)[:500],
        kind="pptx",
        chunks=chunks,
        authors=authors,
        warnings=warnings,
    )


def _title(slide) -> str:
    shape = slide.shapes.title
    if shape is None or not shape.has_text_frame:
        return ""
    return " ".join(shape.text_frame.text.split())


def _slide_content(slide, *, skip_title: bool) -> tuple[list[str], list[list[list[str]]]]:
    texts: list[str] = []
    tables: list[list[list[str]]] = []
    title_id = slide.shapes.title.shape_id if skip_title and slide.shapes.title else None
    for shape in _shapes(slide.shapes, budget=[MAX_SHAPES_PER_SLIDE]):
        if shape.shape_id == title_id:
            continue
        if shape.has_text_frame:
            text = shape.text_frame.text.strip()
            if text:
                texts.append(text)
        elif getattr(shape, "has_table", False) and shape.has_table:
            rows = []
            for row in list(shape.table.rows)[:MAX_TABLE_ROWS]:
                rows.append([cell.text for cell in row.cells])
            tables.append(clean_rows(rows))
    return texts, tables


def _shapes(shapes, *, budget: list[int]) -> list[BaseShape]:
    """Shapes in reading order, groups opened, at most `budget[0]` in all."""
    ordered = sorted(shapes, key=lambda s: ((s.top or 0) // 10_000, s.left or 0))
    out: list[BaseShape] = []
    for shape in ordered:
        if budget[0] <= 0:
            break
        budget[0] -= 1
        if shape.shape_type == MSO_SHAPE_TYPE.GROUP:
            out.extend(_shapes(shape.shapes, budget=budget))
        else:
            out.append(shape)
    return out
