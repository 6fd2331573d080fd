"""OpenDocument text (.odt) and the tables of OpenDocument spreadsheets (.ods),
read from `content.xml` with defusedxml (no entity expansion); an .odt's page
headers and footers (styles.xml's master pages) are read too, after its body.

Our own reader rather than odfpy: odfpy ships no wheel, builds a DOM of the
whole package, and expands a spreadsheet's "repeated" cells and rows as told,
and a one-kilobyte .ods can declare a million repeated columns. Here repeats
are bounded by the caps before anything is built.
"""

from __future__ import annotations

import logging
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from xml.etree.ElementTree import Element

import defusedxml.ElementTree as SafeET
from defusedxml import DefusedXmlException

from .archives import open_checked, read_part, reading
from .mdtables import clean_rows
from .sections import SectionWriter
from .types import ChunkDraft, ParsedDocument, UnreadableDocument

logger = logging.getLogger(__name__)

OFFICE = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
TABLE = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
STYLE = "urn:oasis:names:tc:opendocument:xmlns:style:1.0"
DC = "http://purl.org/dc/elements/1.1/"
META = "urn:oasis:names:tc:opendocument:xmlns:meta:1.0"

MAX_BLOCKS = 50_000
MAX_TABLE_ROWS = 2_000
MAX_TABLE_COLUMNS = 50
MAX_SPACES = 100  # <text:s text:c="…"/>: a run of spaces, bounded
MAX_FURNITURE_LINES = 50  # header and footer paragraphs, all master pages together


def _q(namespace: str, name: str) -> str:
    return f"{{{namespace}}}{name}"


# Inline elements whose text is not part of the paragraph's own words.
_SKIPPED_INLINE = {_q(TEXT, "note-citation"), _q(OFFICE, "annotation"), _q(TEXT, "bookmark-ref")}
_SKIPPED_BLOCKS = {
    _q(TEXT, "table-of-content"),
    _q(TEXT, "alphabetical-index"),
    _q(TEXT, "illustration-index"),
    _q(TEXT, "bibliography"),
    _q(OFFICE, "forms"),
    _q(TEXT, "sequence-decls"),
    _q(TEXT, "variable-decls"),
    _q(TABLE, "calculation-settings"),
}


# Fields in a page header or footer that print the page's number: "1" on
# every page, no words.
_PAGE_FIELDS = {_q(TEXT, "page-number"), _q(TEXT, "page-count")}
HEADER_FOOTER_SECTION = "Header and footer"


def extract_odt(data: bytes, *, filename: str, fallback_title: str) -> ParsedDocument:
    what = "OpenDocument text"
    with open_checked(data, what=what) as archive:
        root = _parse(archive, "content.xml", what=what)
        title = _meta_title(archive, what=what)
        furniture = _header_footer_lines(archive, what=what)
    body = root.find(f"{_q(OFFICE, 'body')}/{_q(OFFICE, 'text')}")
    if body is None:
        raise UnreadableDocument(f"not a readable {what}: it has no text body")
    walker = _TextWalker()
    with reading(what):
        walker.blocks(body)
    chunks = walker.writer.finish()
    if furniture:
        # After the body, under a section of their own: a letterhead's
        # address or a report's name is found, but never opens the document.
        chunks.append(ChunkDraft(text="\n\n".join(furniture), section=HEADER_FOOTER_SECTION))
    if not chunks:
        raise UnreadableDocument("the document has no text")
    return ParsedDocument(
        title=(title or walker.writer.title or fallback_title)[:500],
        kind="odt",
        chunks=chunks,
        warnings=walker.warnings,
    )


@dataclass
class Tables:
    title: str
    count: int  # tables (sheets) in the file
    tables: list[tuple[str, list[list[str]]]] = field(default_factory=list)


def spreadsheet_tables(
    archive: zipfile.ZipFile, *, what: str, max_tables: int, max_rows: int, max_columns: int
) -> Tables:
    """Each sheet's name and up to `max_rows` non-empty rows of at most
    `max_columns` cells (as text)."""
    root = _parse(archive, "content.xml", what=what)
    sheet_root = root.find(f"{_q(OFFICE, 'body')}/{_q(OFFICE, 'spreadsheet')}")
    if sheet_root is None:
        raise UnreadableDocument(f"not a readable {what}: it has no spreadsheet body")
    sheets = sheet_root.findall(_q(TABLE, "table"))
    found = Tables(title=_meta_title(archive, what=what), count=len(sheets))
    with reading(what):
        for sheet in sheets[:max_tables]:
            name = sheet.get(_q(TABLE, "name"), "")
            found.tables.append((name, _rows(sheet, max_rows=max_rows, max_columns=max_columns)))
    return found


def _parse(archive: zipfile.ZipFile, name: str, *, what: str) -> Element:
    data = read_part(archive, name, what=what)
    try:
        return SafeET.fromstring(data)
    except DefusedXmlException as exc:
        raise UnreadableDocument(
            f"refused: {name} of the {what} declares XML entities (an entity-expansion attack?)"
        ) from exc
    except SafeET.ParseError as exc:
        # expat's "not well-formed (invalid token): line 1, column 5" is for the log.
        logger.warning("%s of a %s is not valid XML: %s", name, what, exc)
        raise UnreadableDocument(
            f"not a readable {what}: its {name} is not well-formed XML (save it again)"
        ) from exc


def _header_footer_lines(archive: zipfile.ZipFile, *, what: str) -> list[str]:
    """The distinct paragraphs of the page headers and footers (in
    styles.xml's master pages), without their page-number fields."""
    if "styles.xml" not in archive.namelist():
        return []
    styles = _parse(archive, "styles.xml", what=what)
    lines: dict[str, None] = {}
    for master in styles.iter(_q(STYLE, "master-page")):
        for part in master:
            if not part.tag.startswith(f"{{{STYLE}}}") or not part.tag.endswith(
                ("}header", "}footer", "}header-first", "}footer-first", "}header-left",
                 "}footer-left")
            ):  # fmt: skip
                continue
            for paragraph in (*part.iter(_q(TEXT, "p")), *part.iter(_q(TEXT, "h"))):
                line = " ".join(inline_text(paragraph, skipped=_PAGE_FIELDS).split())
                if line:
                    lines[line] = None
    return list(lines)[:MAX_FURNITURE_LINES]


def _meta_title(archive: zipfile.ZipFile, *, what: str) -> str:
    if "meta.xml" not in archive.namelist():
        return ""
    try:
        meta = _parse(archive, "meta.xml", what=what)
    except UnreadableDocument:
        return ""  # a broken meta.xml costs the title, not the document
    title = meta.find(f".//{_q(DC, 'title')}")
    return " ".join((title.text or "").split()) if title is not None else ""


def inline_text(element: Element, *, skipped: frozenset[str] | set[str] = frozenset()) -> str:
    """A paragraph's words: spans, links, spaces, tabs and line breaks, in
    order (leaving out the inline elements named in `skipped`)."""
    parts: list[str] = []
    _collect(element, parts, skipped)
    return "".join(parts)


def _collect(element: Element, parts: list[str], skipped=frozenset()) -> None:
    if element.text:
        parts.append(element.text)
    for child in element:
        tag = child.tag
        if tag == _q(TEXT, "s"):
            count = child.get(_q(TEXT, "c"), "1")
            parts.append(" " * min(int(count) if count.isdigit() else 1, MAX_SPACES))
        elif tag == _q(TEXT, "tab"):
            parts.append("\t")
        elif tag == _q(TEXT, "line-break"):
            parts.append("\n")
        elif tag not in _SKIPPED_INLINE and tag not in skipped:
            _collect(child, parts, skipped)
        if child.tail:
            parts.append(child.tail)


class _TextWalker:
    def __init__(self) -> None:
        self.writer = SectionWriter()
        self.warnings: list[str] = []
        self.count = 0

    def blocks(self, element: Element, *, bullet: str = "") -> None:
        for child in element:
            self.count += 1
            if self.count > MAX_BLOCKS:
                if not self.warnings:
                    self.warnings.append(f"only the first {MAX_BLOCKS:,} paragraphs were read")
                return
            tag = child.tag
            if tag in _SKIPPED_BLOCKS:
                continue
            if tag == _q(TEXT, "h"):
                level = child.get(_q(TEXT, "outline-level"), "1")
                self.writer.heading(int(level) if level.isdigit() else 1, inline_text(child))
            elif tag == _q(TEXT, "p"):
                text = inline_text(child)
                if text.strip():
                    self.writer.paragraph(f"{bullet}{text}")
            elif tag == _q(TEXT, "list-item") or tag == _q(TEXT, "list-header"):
                self.blocks(child, bullet="- ")
            elif tag == _q(TABLE, "table"):
                self.writer.table(
                    clean_rows(_rows(child, max_rows=MAX_TABLE_ROWS, max_columns=MAX_TABLE_COLUMNS))
                )
            else:  # sections, lists, frames: their content counts
                self.blocks(child, bullet=bullet)


def _rows(table: Element, *, max_rows: int, max_columns: int) -> list[list[str]]:
    rows: list[list[str]] = []
    for row in _row_elements(table):
        cells = _cells(row, max_columns)
        if not any(cells):
            continue  # empty rows, however often "repeated", add nothing
        repeat = _repeat(row.get(_q(TABLE, "number-rows-repeated")))
        for _ in range(min(repeat, max_rows - len(rows))):
            rows.append(cells)
        if len(rows) >= max_rows:
            break
    return rows


def _row_elements(table: Element) -> Iterator[Element]:
    for child in table:
        if child.tag == _q(TABLE, "table-row"):
            yield child
        elif child.tag in (
            _q(TABLE, "table-header-rows"),
            _q(TABLE, "table-rows"),
            _q(TABLE, "table-row-group"),
        ):
            yield from _row_elements(child)


def _cells(row: Element, max_columns: int) -> list[str]:
    cells: list[str] = []
    for cell in row:
        if cell.tag not in (_q(TABLE, "table-cell"), _q(TABLE, "covered-table-cell")):
            continue
        text = "\n".join(inline_text(p) for p in cell.iter(_q(TEXT, "p")))
        repeat = _repeat(cell.get(_q(TABLE, "number-columns-repeated")))
        cells.extend([text] * min(repeat, max_columns - len(cells)))
        if len(cells) >= max_columns:
            break
    return cells


def _repeat(value: str | None) -> int:
    return int(value) if value and value.isdigit() and int(value) > 0 else 1
