"""Word documents (.docx, and .dotx templates) with python-docx: headings
become sections, tables Markdown tables, list items keep a bullet. Body text
only: headers, footers, comments and text boxes are left out (they are mostly
page furniture).

A paragraph's words are read from its XML rather than python-docx's
`Paragraph.text`, which sees only the runs and links directly inside it: the
words of a simple field (`w:fldSimple`: a date, a cross-reference, a mail
merge value), of a content control (`w:sdt`), of a tracked insertion
(`w:ins`) or a smart tag would be lost, and a document written as fields
would read as having no text at all."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator

import docx
from docx.table import Table, _Cell, _Row
from docx.text.paragraph import Paragraph
from lxml import etree

from .archives import as_readable, open_checked, reading
from .mdtables import clean_rows
from .sections import SectionWriter
from .types import ParsedDocument, UnreadableDocument

WHAT = "Word document"
MAX_BLOCKS = 50_000  # paragraphs and tables; a longer document is cut, and says so
MAX_TABLE_ROWS = 2_000

_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_MC = "http://schemas.openxmlformats.org/markup-compatibility/2006"
# The run content that is text, in document order: not inside a text box
# (left out, above) nor in a fallback copy of another (mc:Fallback repeats
# mc:Choice), and never a field's instruction (w:instrText) or deleted text.
_RUN_TEXT = etree.XPath(
    ".//w:r/w:t | .//w:r/w:tab | .//w:r/w:br | .//w:r/w:cr | .//w:r/w:noBreakHyphen",
    namespaces={"w": _W},
)
_OUTSIDE = {
    f"{{{_W}}}txbxContent",
    f"{{{_MC}}}Fallback",
    f"{{{_W}}}del",
    f"{{{_W}}}moveFrom",
}
_P, _TBL, _TR, _TC = (f"{{{_W}}}{name}" for name in ("p", "tbl", "tr", "tc"))
# Block-level wrappers whose paragraphs and tables are the document's own:
# content controls (w:sdt, their words in w:sdtContent) and custom XML.
_BLOCK_WRAPPERS = {f"{{{_W}}}sdt", f"{{{_W}}}sdtContent", f"{{{_W}}}customXml"}
_HEADING_STYLE = re.compile(r"^heading\s*(\d)$", re.IGNORECASE)
_LIST_STYLE = re.compile(r"^list", re.IGNORECASE)


def extract_docx(data: bytes, *, filename: str, fallback_title: str) -> ParsedDocument:
    open_checked(data, what=WHAT).close()
    warnings: list[str] = []
    with reading(WHAT):
        document = docx.Document(io.BytesIO(as_readable(data)))
        writer = SectionWriter()
        for count, block in enumerate(_blocks(document._body._element, document._body)):
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
        raise UnreadableDocument(
            "the Word document has no text in its body (headers, footers, comments and "
            "text boxes are not read)"
        )
    return ParsedDocument(
        title=(core_title or writer.title or fallback_title)[:500],
        kind="docx",
        chunks=chunks,
        authors=authors,
        warnings=warnings,
    )


def _blocks(element, parent) -> Iterator[Paragraph | Table]:
    """The paragraphs and tables of the body in order, those inside content
    controls too (python-docx's own iteration sees only direct children)."""
    for child in element:
        if child.tag == _P:
            yield Paragraph(child, parent)
        elif child.tag == _TBL:
            yield Table(child, parent)
        elif child.tag in _BLOCK_WRAPPERS:
            yield from _blocks(child, parent)


def paragraph_text(paragraph: Paragraph) -> str:
    """Every word the paragraph shows, fields and content controls included."""
    parts: list[str] = []
    for element in _RUN_TEXT(paragraph._p):
        if _inside_skipped(element, paragraph._p):
            continue
        name = etree.QName(element).localname
        if name == "t":
            parts.append(element.text or "")
        elif name == "tab":
            parts.append("\t")
        elif name == "noBreakHyphen":
            parts.append("-")
        else:
            parts.append("\n")
    return "".join(parts)


def _inside_skipped(element, paragraph) -> bool:
    parent = element.getparent()
    while parent is not None and parent is not paragraph:
        if parent.tag in _OUTSIDE:
            return True
        parent = parent.getparent()
    return False


def _paragraph(writer: SectionWriter, paragraph: Paragraph) -> None:
    text = paragraph_text(paragraph)
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
    for number, tr in enumerate(_inside_wrappers(table._tbl, _TR)):
        if number >= MAX_TABLE_ROWS:
            warnings.append(f"a table was cut after {MAX_TABLE_ROWS:,} rows")
            break
        rows.append([_cell_text(tc, table) for tc in _row_cells(_Row(tr, table))])
    return clean_rows(rows)


def _row_cells(row: _Row) -> list:
    """The row's cells (w:tc), a merged one once. python-docx's `row.cells`
    repeats a merged cell per grid column, and sees no cell wrapped in a
    content control: such a row is read from its XML."""
    if any(child.tag in _BLOCK_WRAPPERS for child in row._tr):
        return list(_inside_wrappers(row._tr, _TC))
    cells, seen = [], None
    for cell in row.cells:
        if cell._tc is not seen:
            cells.append(cell._tc)
        seen = cell._tc
    return cells


def _cell_text(tc, table: Table) -> str:
    cell = _Cell(tc, table)
    paragraphs = (b for b in _blocks(tc, cell) if isinstance(b, Paragraph))
    return " ".join(paragraph_text(p) for p in paragraphs)


def _inside_wrappers(element, tag: str) -> Iterator:
    """The children of `element` named `tag`, those inside content controls too."""
    for child in element:
        if child.tag == tag:
            yield child
        elif child.tag in _BLOCK_WRAPPERS:
            yield from _inside_wrappers(child, tag)
