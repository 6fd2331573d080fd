"""The reader of each format `apps.library.formats` lists: one call shape,
(bytes, ParseRequest) → ParsedDocument, over the parsers' own signatures.
Imported only where parsing runs (the parser's child process)."""

from __future__ import annotations

from apps.library.ingest.parsing.epub import extract_epub
from apps.library.ingest.parsing.html import parse_html
from apps.library.ingest.parsing.images import extract_image
from apps.library.ingest.parsing.markdown import parse_markdown, parse_text
from apps.library.ingest.parsing.opendocument import extract_odt
from apps.library.ingest.parsing.pdf import extract_pdf
from apps.library.ingest.parsing.rtf import extract_rtf
from apps.library.ingest.parsing.sheets import extract_csv, extract_ods, extract_xlsx
from apps.library.ingest.parsing.slides import extract_pptx
from apps.library.ingest.parsing.types import ParsedDocument, ParseRequest, UnreadableDocument
from apps.library.ingest.parsing.word import extract_docx


def decode_text(data: bytes) -> str:
    """A text format's bytes as text: UTF-8 (a BOM allowed), or the reason not."""
    if not data.strip():
        raise UnreadableDocument("empty file")
    if b"\x00" in data[:8192]:
        raise UnreadableDocument("binary content in a text file; skipped")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UnreadableDocument(f"not valid UTF-8 text (byte {exc.start}); skipped") from exc


def read_note(data: bytes, request: ParseRequest) -> ParsedDocument:
    return parse_markdown(decode_text(data), fallback_title=request.fallback_title)


def read_text(data: bytes, request: ParseRequest) -> ParsedDocument:
    return parse_text(decode_text(data), fallback_title=request.fallback_title)


def read_pdf(data: bytes, request: ParseRequest) -> ParsedDocument:
    parsed = extract_pdf(data, filename=request.filename, options=request.options)
    parsed.kind = request.kind  # a paper stays a paper
    return parsed


def read_epub(data: bytes, request: ParseRequest) -> ParsedDocument:
    return extract_epub(data, filename=request.filename)


def read_html(data: bytes, request: ParseRequest) -> ParsedDocument:
    return parse_html(data, url=request.url, fallback_title=request.fallback_title)


def read_image(data: bytes, request: ParseRequest) -> ParsedDocument:
    return extract_image(
        data,
        filename=request.filename,
        fallback_title=request.fallback_title,
        options=request.options,
    )


def _package(extract):
    """A reader over a parser of (bytes, filename=, fallback_title=): Office files and CSV."""

    def read(data: bytes, request: ParseRequest) -> ParsedDocument:
        return extract(data, filename=request.filename, fallback_title=request.fallback_title)

    return read


read_docx = _package(extract_docx)
read_pptx = _package(extract_pptx)
read_xlsx = _package(extract_xlsx)
read_odt = _package(extract_odt)
read_ods = _package(extract_ods)
read_rtf = _package(extract_rtf)
read_csv = _package(extract_csv)
