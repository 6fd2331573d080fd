"""EPUB e-books with PyMuPDF: page text chunked under the chapter it belongs to.

MuPDF lays the reflowable book out into pages (each spine document starts on
a new page), so every chunk can cite a page like a PDF's, and the table of
contents says which chapter a page belongs to. When a chapter starts part-way
down a page, the page is split at the block that carries the chapter's title.
"""

from __future__ import annotations

import html
import io
import re
import zipfile
from dataclasses import dataclass
from pathlib import PurePath

import pymupdf

from .pdf import dehyphenate, is_meaningful_title, split_text
from .types import ChunkDraft, ParsedDocument, UnreadableDocument

MAX_TITLE_CHARS = 200
BREADCRUMB_SEPARATOR = " › "
MAX_MANIFEST_BYTES = 1_000_000  # encryption.xml is read to tell DRM from font obfuscation

_TEXT_FLAGS = pymupdf.TEXTFLAGS_TEXT & ~pymupdf.TEXT_PRESERVE_LIGATURES
_WHITESPACE = re.compile(r"\s+")
# Font obfuscation (IDPF and Adobe) "encrypts" only fonts and is not DRM.
_CIPHER_REFERENCE = re.compile(r"""<(?:\w+:)?CipherReference[^>]*\bURI\s*=\s*["']([^"']+)""")
_FONT_FILE = re.compile(r"\.(?:ttf|otf|woff2?|ttc|pfb|pfm)$", re.I)
_ROOTFILE = re.compile(r"""<(?:\w+:)?rootfile\b[^>]*\bfull-path\s*=\s*["']([^"']+)""")
_CREATOR = re.compile(r"<dc:creator\b[^>]*>(.*?)</dc:creator\s*>", re.S | re.I)
_TAG = re.compile(r"<[^>]*>")
# What zipfile raises on damaged, encrypted or exotic archives.
_ZIP_ERRORS = (zipfile.BadZipFile, ValueError, OSError, EOFError, RuntimeError, NotImplementedError)


@dataclass
class _Entry:
    """A table-of-contents entry: where it starts and its breadcrumb."""

    page: int  # 1-based
    title: str
    breadcrumb: str
    key: str  # the title, normalised, for finding it in the page text


def extract_epub(data: bytes, *, filename: str) -> ParsedDocument:
    """Parse an EPUB into per-page chunks named after their chapter, plus title/authors.

    Raises UnreadableDocument when nothing can be indexed (empty, corrupt,
    DRM-protected, or no text).
    """
    with _open(data) as doc:
        entries = _toc_entries(doc)
        chunks, unreadable = _chunks(doc, entries)
        if not chunks:
            if unreadable:
                raise UnreadableDocument("not a readable EPUB: no page could be read")
            raise UnreadableDocument("no text in the EPUB")
        warnings = [f"page(s) {unreadable} could not be read"] if unreadable else []
        metadata = doc.metadata or {}
        return ParsedDocument(
            title=_title(metadata.get("title") or "", filename),
            kind="epub",
            chunks=chunks,
            authors=", ".join(_package_creators(data)) or _authors(metadata.get("author") or ""),
            warnings=warnings,
        )


def _open(data: bytes) -> pymupdf.Document:
    if not data:
        raise UnreadableDocument("empty file")
    drm = _drm_reason(data)
    if drm:
        raise UnreadableDocument(drm)
    try:
        doc = pymupdf.open(stream=data, filetype="epub")
    except (pymupdf.FileDataError, pymupdf.EmptyFileError, RuntimeError, ValueError) as exc:
        raise UnreadableDocument(f"not a readable EPUB: {_open_failure(data)}") from exc
    if doc.page_count == 0:
        doc.close()
        raise UnreadableDocument("no text in the EPUB")
    return doc


def _open_failure(data: bytes) -> str:
    """Why MuPDF could not open it; MuPDF itself only says "Failed to open stream"."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = set(archive.namelist())
    except _ZIP_ERRORS:
        if data.startswith(b"PK"):
            return "damaged or truncated file"
        return "not a ZIP archive (is this really an EPUB?)"
    if "META-INF/container.xml" not in names:
        return "META-INF/container.xml is missing"
    return "damaged package (its container or OPF file could not be read)"


def _package_creators(data: bytes) -> list[str]:
    """Every dc:creator of the package; MuPDF's metadata keeps only the first.
    Read with regexes, not an XML parser: no entity or DTD in it is ever resolved."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            container = _small_text(archive, "META-INF/container.xml")
            rootfile = _ROOTFILE.search(container)
            package = _small_text(archive, html.unescape(rootfile.group(1))) if rootfile else ""
    except (*_ZIP_ERRORS, KeyError):
        return []
    creators = (_clean(html.unescape(_TAG.sub("", raw))) for raw in _CREATOR.findall(package))
    return [creator for creator in creators if creator]


def _small_text(archive: zipfile.ZipFile, name: str) -> str:
    info = archive.getinfo(name)
    if info.file_size > MAX_MANIFEST_BYTES:
        return ""
    return archive.read(info).decode("utf-8", errors="replace")


def _drm_reason(data: bytes) -> str:
    """A reason when the book is DRM-protected: its text would be ciphertext."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = set(archive.namelist())
            if "META-INF/rights.xml" in names:
                return "DRM-protected EPUB (it must be opened in the shop's reader)"
            if "META-INF/encryption.xml" not in names:
                return ""
            manifest = _small_text(archive, "META-INF/encryption.xml")
    except _ZIP_ERRORS:
        return ""  # opening will fail and say why
    encrypted = _CIPHER_REFERENCE.findall(manifest)
    if any(not _FONT_FILE.search(uri) for uri in encrypted):
        return "DRM-protected EPUB (it must be opened in the shop's reader)"
    return ""


# --- chapters ----------------------------------------------------------------


def _toc_entries(doc: pymupdf.Document) -> list[_Entry]:
    try:
        toc = doc.get_toc(simple=True)
    except (RuntimeError, ValueError):
        return []
    entries: list[_Entry] = []
    path: list[str] = []
    for level, raw_title, page in toc:
        title = _clean(raw_title)
        if not title:
            continue
        level = max(1, level)
        path = [*path[: level - 1], title]
        if page < 1:  # an entry MuPDF could not resolve to a page
            continue
        entries.append(
            _Entry(
                page=page,
                title=title,
                breadcrumb=BREADCRUMB_SEPARATOR.join(path),
                key=title.casefold(),
            )
        )
    entries.sort(key=lambda entry: entry.page)  # stable: TOC order within a page
    return entries


def _chunks(doc: pymupdf.Document, entries: list[_Entry]) -> tuple[list[ChunkDraft], list[int]]:
    by_page: dict[int, list[_Entry]] = {}
    for entry in entries:
        by_page.setdefault(entry.page, []).append(entry)

    chunks: list[ChunkDraft] = []
    unreadable: list[int] = []
    current: _Entry | None = None
    for index in range(doc.page_count):
        number = index + 1
        try:
            blocks = _page_blocks(doc.load_page(index))
        except (RuntimeError, ValueError):
            unreadable.append(number)
            current = _last(by_page.get(number), current)
            continue
        groups, current = _sections_of_page(blocks, by_page.get(number, []), current)
        for entry, paragraphs in groups:
            section = entry.breadcrumb if entry else f"Page {number}"
            chunks.extend(
                ChunkDraft(text=piece, section=section, page=number)
                for piece in split_text("\n\n".join(paragraphs))
            )
    return chunks, unreadable


def _last(entries: list[_Entry] | None, default: _Entry | None) -> _Entry | None:
    return entries[-1] if entries else default


def _sections_of_page(
    blocks: list[str], starting_here: list[_Entry], current: _Entry | None
) -> tuple[list[tuple[_Entry | None, list[str]]], _Entry | None]:
    """The page's paragraphs grouped by the TOC entry they fall under, and the
    entry the next page continues.

    An entry starts at the first block that begins with its title. One whose
    title is not in the text starts at the top of the page when it comes
    before every entry that was found, and otherwise at the end of the page.
    """
    found: dict[int, int] = {}  # entry position → block index
    block_index = 0
    for position, entry in enumerate(starting_here):
        for index in range(block_index, len(blocks)):
            if blocks[index].casefold().startswith(entry.key):
                found[position] = block_index = index
                break

    first_found = min(found) if found else len(starting_here)
    if first_found:
        current = starting_here[first_found - 1]
    starts = {index: starting_here[position] for position, index in found.items()}
    groups: list[tuple[_Entry | None, list[str]]] = [(current, [])]
    for index, text in enumerate(blocks):
        if index in starts:
            groups.append((starts[index], []))
        groups[-1][1].append(text)
    after = (
        groups[-1][0] if not found or max(found) == len(starting_here) - 1 else starting_here[-1]
    )
    return [group for group in groups if group[1]], after


def _page_blocks(page: pymupdf.Page) -> list[str]:
    blocks = page.get_text("blocks", flags=_TEXT_FLAGS)
    paragraphs = (_clean(dehyphenate(block[4]).replace("\u00ad", "")) for block in blocks)
    return [text for block, text in zip(blocks, paragraphs, strict=True) if block[6] == 0 and text]


# --- metadata ----------------------------------------------------------------


def _title(raw: str, filename: str) -> str:
    title = _clean(raw)
    if is_meaningful_title(title):
        return _truncate(title, MAX_TITLE_CHARS)
    stem = PurePath(filename.replace("\\", "/")).stem if filename else ""
    return _clean(re.sub(r"[_-]+", " ", stem)) or "Untitled e-book"


def _authors(raw: str) -> str:
    # MuPDF joins several dc:creator entries with ", "; some books use ";" or "&".
    names = [_clean(name) for name in re.split(r"\s*(?:;|&|\band\b)\s*", raw)]
    return ", ".join(name for name in names if name)


def _truncate(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0]
    return cut or text[:limit]


def _clean(text: str) -> str:
    return _WHITESPACE.sub(" ", text).strip()
