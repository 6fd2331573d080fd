"""Spreadsheets: .xlsx (openpyxl, read-only streaming), .ods (our own
OpenDocument reader) and .csv (the standard library). Each sheet is a section
("Sheet · Budget 2026"); its rows become Markdown tables whose chunks repeat
the header row. Only the first MAX_ROWS rows and MAX_COLUMNS columns of a
sheet are read, and a sheet cut short says so: a household's spreadsheets are
lists and budgets, and a 100,000-row export is better searched elsewhere."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator, Sequence

import openpyxl

from .archives import as_readable, open_checked, reading
from .mdtables import clean_rows, table_chunks
from .opendocument import spreadsheet_tables
from .types import ChunkDraft, ParsedDocument, UnreadableDocument

MAX_SHEETS = 100
MAX_ROWS = 2_000  # per sheet
MAX_COLUMNS = 50
CSV_SNIFF_BYTES = 64 * 1024


def extract_xlsx(data: bytes, *, filename: str, fallback_title: str) -> ParsedDocument:
    what = "spreadsheet"
    open_checked(data, what=what).close()
    book = _Book(fallback_title)
    with reading(what):
        workbook = openpyxl.load_workbook(
            io.BytesIO(as_readable(data)), read_only=True, data_only=True, keep_links=False
        )
        try:
            sheets = workbook.worksheets
            book.note_sheet_count(len(sheets))
            for sheet in sheets[:MAX_SHEETS]:
                if not hasattr(sheet, "iter_rows"):
                    continue  # a chart sheet: no cells
                rows = sheet.iter_rows(max_col=MAX_COLUMNS, values_only=True)
                book.add_sheet(sheet.title, rows)
            title = (workbook.properties.title or "").strip()
            authors = (workbook.properties.creator or "").strip()
        finally:
            workbook.close()
    return book.parsed(kind="xlsx", title=title, authors=authors)


def extract_ods(data: bytes, *, filename: str, fallback_title: str) -> ParsedDocument:
    what = "OpenDocument spreadsheet"
    book = _Book(fallback_title)
    with open_checked(data, what=what) as archive:
        tables = spreadsheet_tables(
            archive,
            what=what,
            max_tables=MAX_SHEETS,
            max_rows=MAX_ROWS + 1,
            max_columns=MAX_COLUMNS,
        )
    book.note_sheet_count(tables.count)
    for name, rows in tables.tables:
        book.add_sheet(name, rows)
    return book.parsed(kind="ods", title=tables.title, authors="")


def extract_csv(data: bytes, *, filename: str, fallback_title: str) -> ParsedDocument:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UnreadableDocument(f"not valid UTF-8 text (byte {exc.start})") from exc
    dialect = csv_dialect(text[:CSV_SNIFF_BYTES])
    book = _Book(fallback_title)
    with reading("CSV file"):
        reader = csv.reader(io.StringIO(text, newline=""), dialect)
        book.add_sheet("", (row[:MAX_COLUMNS] for row in reader))
    return book.parsed(kind="csv", title="", authors="")


def csv_dialect(sample: str) -> type[csv.Dialect]:
    """The sample's delimiter among , ; tab | (Excel in much of Europe writes ';')."""
    try:
        return csv.Sniffer().sniff(sample, delimiters=",;\t|")
    except csv.Error:
        return csv.excel


class _Book:
    def __init__(self, fallback_title: str) -> None:
        self.fallback_title = fallback_title
        self.chunks: list[ChunkDraft] = []
        self.warnings: list[str] = []
        self.sheets = 0

    def note_sheet_count(self, count: int) -> None:
        if count > MAX_SHEETS:
            self.warnings.append(f"only the first {MAX_SHEETS} of {count} sheets were read")

    def add_sheet(self, name: str, rows: Iterable[Sequence[object]]) -> None:
        self.sheets += 1
        kept, more = _first_rows(rows)
        table = clean_rows(kept)
        label = name or "the table"
        if more:
            self.warnings.append(
                f"{'sheet ' + repr(name) if name else 'the table'}: only the first "
                f"{MAX_ROWS:,} rows were indexed (it has more)"
            )
        if not table:
            return
        section = f"Sheet · {name}" if name else ""
        pieces = table_chunks(table)
        if more:
            pieces[-1] += f"\n\n(… {label} continues beyond row {MAX_ROWS:,}; not indexed)"
        self.chunks.extend(ChunkDraft(text=piece, section=section) for piece in pieces)

    def parsed(self, *, kind: str, title: str, authors: str) -> ParsedDocument:
        if not self.chunks:
            raise UnreadableDocument("the spreadsheet has no cells with text")
        return ParsedDocument(
            title=(title or self.fallback_title)[:500],
            kind=kind,
            chunks=self.chunks,
            authors=authors,
            warnings=self.warnings,
        )


def _first_rows(rows: Iterable[Sequence[object]]) -> tuple[list[Sequence[object]], bool]:
    """Up to MAX_ROWS non-empty rows, and whether a further non-empty row exists."""
    kept: list[Sequence[object]] = []
    iterator: Iterator[Sequence[object]] = iter(rows)
    for row in iterator:
        if not any(cell not in (None, "") for cell in row):
            continue
        if len(kept) == MAX_ROWS:
            return kept, True
        kept.append(row)
    return kept, False
