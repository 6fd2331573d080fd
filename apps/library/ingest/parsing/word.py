"""Word documents (.docx) with python-docx: headings become sections, tables
Markdown tables, list items keep a bullet. Body text only: headers, footers,
comments and text boxes are left out (they are mostly page furniture)."""

from __future__ import annotations

import io
import re

import docx
from docx.table import Table
from docx.text.paragraph import Paragraph

from .archives import open_checked, reading
from .mdtables import clean_rows
from .sections import SectionWriter
from .types import ParsedDocument, UnreadableDocument

WHAT = "Word document"
MAX_BLOCKS = 50_000  # paragraphs and tables; a longer document is cut, and says so
MAX_TABLE_ROWS = 2_000

_HEADING_STYLE = re.compile(r"^heading\s*(\d)$", re.IGNORECASE)
_LIST_STYLE = re.compile(r"^list", re.IGNORECASE)


def extract_docx(data: bytes, *, filename: str, fallback_title: str) -> ParsedDocument:
    open_checked(data, what=WHAT).close()
    warnings: list[str] = []
    with reading(WHAT):
        document = docx.Document(io.BytesIO(data))
        writer = SectionWriter()
        for count, block in enumerate(document.iter_inner_content()):
            if count >= MAX_BLOCKS:
                warnings.append(f"only the first {MAX_BLOCKS:,} paragraphs and tables were read")
                break
            if isinstance(block, Paragraph):
                _paragraph(writer, block)
            elif isinstance(block, Table):
                writer.table(_table_rows(block, warnings))
        chunks = writer.finish()
        core_title = (document.core_properties.title or "").strip()
        authors = (document.core_properties.author or "").strip()
    if not chunks:
        raise UnreadableDocument("the Word document has no text")
    return ParsedDocument(
        title=(core_title or writer.title or fallback_title)[:500],
        kind="docx",
        chunks=chunks,
        authors=authors,
        warnings=warnings,
    )


def _paragraph(writer: SectionWriter, paragraph: Paragraph) -> None:
    text = paragraph.text
    if not text.strip():
        return
    level = _heading_level(paragraph)
    if level is not None:
        writer.heading(level, text)
    elif _is_list_item(paragraph):
        writer.paragraph(f"- {text}")
    else:
        writer.paragraph(text)


def _is_list_item(paragraph: Paragraph) -> bool:
    numbered = paragraph._p.pPr is not None and paragraph._p.pPr.numPr is not None
    return numbered or bool(_LIST_STYLE.match(_style_name(paragraph)))


def _style_name(paragraph: Paragraph) -> str:
    try:
        style = paragraph.style
    except (KeyError, ValueError):  # a style id the styles part does not define
        return ""
    return (style.name or "") if style is not None else ""


def _heading_level(paragraph: Paragraph) -> int | None:
    """0 for the Title style, 1-9 for headings (by style or outline level), else None."""
    name = _style_name(paragraph)
    if name.lower() == "title":
        return 0
    match = _HEADING_STYLE.match(name)
    if match:
        return int(match.group(1))
    outline = paragraph._p.xpath("./w:pPr/w:outlineLvl/@w:val")
    if outline and outline[0].isdigit() and int(outline[0]) < 9:
        return int(outline[0]) + 1
    return None


def _table_rows(table: Table, warnings: list[str]) -> list[list[str]]:
    rows = []
    for number, row in enumerate(table.rows):
        if number >= MAX_TABLE_ROWS:
            warnings.append(f"a table was cut after {MAX_TABLE_ROWS:,} rows")
            break
        cells, seen = [], None
        for cell in row.cells:
            # A merged cell is returned once per grid column it spans.
            if cell._tc is seen:
                continue
            seen = cell._tc
            cells.append(" ".join(p.text for p in cell.paragraphs))
        rows.append(cells)
    return clean_rows(rows)
