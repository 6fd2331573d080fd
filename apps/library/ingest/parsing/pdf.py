"""PDF extraction with PyMuPDF: annotations (`pdf_annotations.py`), body text
and metadata, without an LLM.

Annotations come first because they are what the person chose to keep: a
scanned PDF with no text layer is still worth indexing for its highlights and
notes. Body text is chunked per page so every chunk can cite its page.

Speed matters (the target is >= 150 pages/s on 2 cores), so only cheap
extraction modes are used: "blocks" for body text, "words" only on pages that
carry text-markup annotations, and the costly "dict" mode only on page 1 for
the title.

A page without a text layer that shows an image or drawing (a scan) is read by
OCR (`ocr.py`, Tesseract), up to `options.ocr_max_pages` pages (in the long
lane only: the quick lane raises OcrNeeded instead); its chunks are marked
`origin="ocr"`. Figures (`figures.py`) are collected for the worker to describe.
"""

from __future__ import annotations

import logging
import os
import re
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import PurePath

import pymupdf
from PIL import Image

from .figures import MUPDF_ERRORS, pdf_figures
from .ocr import MAX_OCR_PIXELS, OcrUnavailable, check_languages, no_text_warning, recognise
from .pdf_annotations import TEXT_FLAGS as _TEXT_FLAGS
from .pdf_annotations import annotation_chunks as _annotation_chunks
from .pdf_annotations import centre_inside as _centre_inside
from .pdf_annotations import clean as _clean
from .types import ChunkDraft, OcrNeeded, ParsedDocument, ParseOptions, UnreadableDocument

logger = logging.getLogger(__name__)

MAX_CHUNK_CHARS = 1000
MAX_TITLE_CHARS = 200
DOI_PAGES = 2  # a paper prints its DOI on the first page, sometimes the second
OCR_DPI = 300
OCR_WORKERS = max(1, min(2, os.cpu_count() or 1))  # tesseract processes at once


# A hyphen between two letters at a line end: either hyphenation or a compound
# word that happens to break there (see dehyphenate).
_LINE_END_HYPHEN = re.compile(r"([^\W\d_])([-\u00ad])\n\s*([^\W\d_])")
_DOI = re.compile(r"10\.\d{4,9}/[-._;()/:A-Za-z0-9]+")

# Metadata titles that describe the file or the authoring tool, not the content.
_JUNK_TITLES = frozenset(
    {"untitled", "untitled document", "title", "no title", "document", "unknown", "none", "null"}
)
_JUNK_TITLE_PATTERNS = (
    re.compile(r"^microsoft (word|powerpoint|excel) - ", re.IGNORECASE),
    re.compile(r"\.(pdf|docx?|odt|rtf|tex|dvi|ps|pptx?|txt|indd|qxd)$", re.IGNORECASE),
    re.compile(r"^[\d\s._-]+$"),
)
# Usernames that word processors put into /Author when nobody set one.
_JUNK_AUTHORS = frozenset({"unknown", "administrator", "admin", "user", "owner", "author"})
_AUTHOR_SEPARATORS = re.compile(r"\s*(?:;|,|&|/|\n|\band\b)\s*", re.IGNORECASE)

# A title line must be clearly larger than the body text, otherwise the first
# body line of a plain letter would become its title.
_TITLE_MIN_SIZE_RATIO = 1.15
_TITLE_REGION = 0.6  # fraction of the first page, from the top, where a title may sit
_SIZE_TOLERANCE = 0.5


def extract_pdf(
    data: bytes, *, filename: str, options: ParseOptions | None = None
) -> ParsedDocument:
    """Parse a PDF into annotation chunks, then body chunks, plus title/authors/DOI.

    Raises UnreadableDocument when nothing can be indexed (empty, corrupt,
    password-protected, or no text layer, no text recognised and no annotations).
    """
    options = options or ParseOptions()
    with _open(data) as doc:
        try:
            return _extract(doc, filename, options)
        except MUPDF_ERRORS as exc:
            # A broken object outside any one page (the outline, metadata, an
            # image's stream): a plain reason, not MuPDF's "code=7: …".
            raise UnreadableDocument(
                "not a readable PDF: the file is damaged (MuPDF could not read part of it)"
            ) from exc


def _extract(doc: pymupdf.Document, filename: str, options: ParseOptions) -> ParsedDocument:
    pages = _extract_pages(doc, options)
    warnings: list[str] = []
    if doc.is_repaired:
        warnings.append("the PDF was damaged and has been repaired; some text may be missing")
    if pages.unreadable:
        warnings.append(f"{_page_list(pages.unreadable)} could not be read (skipped)")
    warnings.extend(pages.ocr_warnings)

    if not pages.body and not pages.annotations:
        if pages.unreadable and len(pages.unreadable) == doc.page_count:
            raise UnreadableDocument(
                "not a readable PDF: no page could be read (the file is damaged)"
            )
        raise UnreadableDocument(_no_text_reason(pages, options, doc))
    if not pages.body:
        reason = _no_text_reason(pages, options, doc)
        warnings.append(f"{reason}: only annotations were indexed")

    metadata = doc.metadata or {}
    metadata_texts = [metadata.get("subject") or "", metadata.get("keywords") or ""]
    return ParsedDocument(
        title=_title(metadata, doc, filename),
        kind="pdf",
        chunks=pages.annotations + pages.body,
        authors=_authors(metadata.get("author") or ""),
        doi=_find_doi([*metadata_texts, *pages.first_texts]),
        warnings=warnings,
        figures=pdf_figures(
            doc,
            pages=[n for n in pages.with_images if n not in set(pages.ocr_pages)],
            with_images=options.figure_images,
        ),
        ocr_pages=pages.ocr_pages,
        ocr_empty_pages=pages.ocr_empty,
    )


def _no_text_reason(pages: _Pages, options: ParseOptions, doc: pymupdf.Document) -> str:
    """Why a PDF gave no body text, in the words that are true of it: pages
    that draw nothing at all are not a scan, and a file MuPDF repaired that
    then holds no text is said to be both."""
    if not pages.scanned:
        reason = "no text: the pages draw nothing (no text, images or drawings)"
    elif not options.ocr_languages:
        reason = "scanned: no text layer, and OCR is turned off for this collection"
    elif pages.ocr_error:
        reason = f"scanned: no text layer, and {pages.ocr_error}"
    elif pages.ocr_pages and not pages.with_images:
        reason = (
            "no text: the pages hold only drawings, and no text was recognised in them "
            f"(OCR languages: {options.ocr_languages})"
        )
    elif pages.ocr_pages:
        reason = (
            f"scanned: no text was recognised on any page (OCR languages: {options.ocr_languages})"
        )
    else:  # every scanned page failed in OCR (a timeout); the warnings say which
        reason = "scanned: no text layer, and OCR could not read the pages"
    if pages.unreadable:
        reason += f"; {_page_list(pages.unreadable)} could not be read"
    if doc.is_repaired:
        reason += " (the file was damaged and has been repaired)"
    return reason


def _page_list(numbers: list[int]) -> str:
    shown = ", ".join(str(n) for n in numbers[:20]) + ("…" if len(numbers) > 20 else "")
    return f"page {shown}" if len(numbers) == 1 else f"pages {shown}"


@dataclass
class _Pages:
    annotations: list[ChunkDraft] = field(default_factory=list)
    body: list[ChunkDraft] = field(default_factory=list)
    first_texts: list[str] = field(default_factory=list)  # where a DOI is looked for
    unreadable: list[int] = field(default_factory=list)
    scanned: list[int] = field(default_factory=list)  # no text, but an image or drawing
    with_images: list[int] = field(default_factory=list)  # pages that show raster images
    ocr_pages: list[int] = field(default_factory=list)  # read by OCR
    ocr_empty: list[int] = field(default_factory=list)  # read by OCR, nothing found
    ocr_error: str = ""  # why OCR could not run at all
    ocr_warnings: list[str] = field(default_factory=list)


def _extract_pages(doc: pymupdf.Document, options: ParseOptions) -> _Pages:
    pages = _Pages()
    texts: dict[int, str] = {}  # page number -> its text layer
    scanned = pages.scanned
    for index in range(doc.page_count):
        number = index + 1
        try:
            page = doc.load_page(index)
            annotations = _annotation_chunks(page, number)
            text = _page_text(page)
            has_images = bool(page.get_images(full=False))  # the resource list: cheap
            if has_images:
                pages.with_images.append(number)
            if not text and (has_images or bool(page.get_cdrawings())):
                scanned.append(number)
        except MUPDF_ERRORS:
            # One broken page object should not lose the rest of the document;
            # the warnings name the page.
            pages.unreadable.append(number)
            continue
        pages.annotations.extend(annotations)
        texts[number] = text
    if scanned and options.ocr_languages:
        if options.ocr_elsewhere:
            raise OcrNeeded(min(len(scanned), options.ocr_max_pages))
        texts.update(_recognise_pages(doc, scanned, options, pages))
    for number, text in texts.items():
        if number <= DOI_PAGES:
            pages.first_texts.append(text)
        origin = "ocr" if number in pages.ocr_pages else ""
        pages.body.extend(
            ChunkDraft(text=piece, section=f"Page {number}", page=number, origin=origin)
            for piece in split_text(text)
        )
    if pages.ocr_empty and len(pages.ocr_empty) < len(pages.ocr_pages):
        pages.ocr_warnings.append(no_text_warning(pages.ocr_empty))
    if pages.ocr_error and pages.body:
        pages.ocr_warnings.append(f"pages without a text layer were not read: {pages.ocr_error}")
    return pages


def _recognise_pages(
    doc: pymupdf.Document, numbers: list[int], options: ParseOptions, pages: _Pages
) -> dict[int, str]:
    """OCR of the scanned pages (at most `options.ocr_max_pages`; later pages
    say they were skipped), OCR_WORKERS at a time:
    tesseract runs as its own process, so two pages use two cores. Pages are
    rendered here, one batch at a time (MuPDF is not thread-safe, and a batch
    of rendered A4 pages is ~9 MB each)."""
    try:
        languages = check_languages(options.ocr_languages)
    except OcrUnavailable as exc:
        pages.ocr_error = str(exc)
        return {}
    cap = max(0, options.ocr_max_pages)
    if len(numbers) > cap:
        pages.ocr_warnings.append(
            f"only the first {cap} scanned pages were read by OCR; "
            f"{len(numbers) - cap} more were not (JARVIS_OCR_MAX_PAGES)"
        )
        numbers = numbers[:cap]
    found: dict[int, str] = {}
    with ThreadPoolExecutor(max_workers=OCR_WORKERS) as pool:
        for start in range(0, len(numbers), OCR_WORKERS):
            batch = numbers[start : start + OCR_WORKERS]
            rendered = {number: _render_for_ocr(doc, number) for number in batch}
            for number in [n for n in batch if rendered[n] is None]:
                pages.unreadable.append(number)
            batch = [number for number in batch if rendered[number] is not None]
            images = [rendered[number] for number in batch]
            read = pool.map(lambda image: _read_or_error(*image, languages), images)
            for number, (text, error) in zip(batch, read, strict=True):
                if isinstance(error, OcrUnavailable):
                    pages.ocr_error = str(error)
                    return found
                if error is not None:  # this page only (a timeout, a crash)
                    pages.ocr_warnings.append(f"page {number}: {error}")
                    continue
                found[number] = text
                pages.ocr_pages.append(number)
                if not text:
                    pages.ocr_empty.append(number)
    return found


def _read_or_error(
    image: Image.Image, dpi: int, languages: str
) -> tuple[str, UnreadableDocument | None]:
    try:
        return recognise(image, languages=languages, dpi=dpi), None
    except UnreadableDocument as exc:
        return "", exc


def _render_for_ocr(doc: pymupdf.Document, number: int) -> tuple[Image.Image, int] | None:
    """The page grey at OCR_DPI (less for a page so large that would exceed
    MAX_OCR_PIXELS), and the resolution it was rendered at; None when MuPDF
    cannot draw it (the page is then named as unreadable)."""
    try:
        page = doc.load_page(number - 1)
        inches = (page.rect.width / 72) * (page.rect.height / 72)
        dpi = max(72, min(OCR_DPI, int((MAX_OCR_PIXELS / max(inches, 0.01)) ** 0.5)))
        pixmap = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY, alpha=False)
    except MUPDF_ERRORS:
        return None
    return Image.frombytes("L", (pixmap.width, pixmap.height), pixmap.samples), dpi


def _open(data: bytes) -> pymupdf.Document:
    if not data:
        raise UnreadableDocument("empty file")
    try:
        doc = pymupdf.open(stream=data, filetype="pdf")
    except (pymupdf.FileDataError, *MUPDF_ERRORS) as exc:
        raise UnreadableDocument(f"not a readable PDF: {_open_failure(data, exc)}") from exc
    # An empty user password is tried automatically on open, so needs_pass is
    # only true when a real password is required.
    try:
        encrypted, pages = doc.needs_pass, (0 if doc.needs_pass else doc.page_count)
    except MUPDF_ERRORS as exc:  # the page tree cannot even be counted
        doc.close()
        raise UnreadableDocument("not a readable PDF: its list of pages is damaged") from exc
    if encrypted:
        doc.close()
        raise UnreadableDocument("encrypted PDF (password required)")
    if pages == 0:
        doc.close()
        raise UnreadableDocument("not a readable PDF: it has no pages")
    return doc


def _open_failure(data: bytes, exc: BaseException) -> str:
    # MuPDF only says "Failed to open stream"; a missing header tells the
    # person they picked the wrong file rather than a broken PDF.
    if b"%PDF-" not in data[:1024]:
        return "no PDF header (is this really a PDF?)"
    # MuPDF's own words ("code=2: …") mean something to a developer only.
    logger.warning("MuPDF could not open a PDF: %s", _clean(str(exc)))
    return "the file is damaged beyond repair (save or download it again)"


# --- body text ---------------------------------------------------------------


def _page_text(page: pymupdf.Page) -> str:
    """The page's paragraphs in reading order, separated by blank lines."""
    # MuPDF's native block order, not sort=True: sorting by position interleaves
    # the paragraphs of a two-column paper, while content-stream order keeps
    # each column whole.
    blocks = page.get_text("blocks", flags=_TEXT_FLAGS)
    drawn_by_annots = _free_text_areas(page)
    paragraphs = (
        _paragraph(block[4])
        for block in blocks
        if block[6] == 0 and not _centre_inside(block, drawn_by_annots)
    )
    return "\n\n".join(paragraph for paragraph in paragraphs if paragraph)


def _free_text_areas(page: pymupdf.Page) -> list[pymupdf.Rect]:
    """Where free-text boxes are drawn. MuPDF extracts their appearance as page
    text; it is already indexed as a [NOTE] and would otherwise make a scanned
    page look as if it had a text layer."""
    if page.first_annot is None:
        return []
    return [annot.rect for annot in page.annots(types=(pymupdf.PDF_ANNOT_FREE_TEXT,))]


def _paragraph(block_text: str) -> str:
    return _clean(dehyphenate(block_text))


def dehyphenate(text: str) -> str:
    """Join words split across lines ("retrie-\\nval" -> "retrieval")."""

    def join(match: re.Match[str]) -> str:
        hyphen, tail = match[2], match[3]
        # A soft hyphen is always a line-break hyphen; a real one before a
        # capital is a compound ("Self-Attention") and stays.
        if hyphen == "\u00ad" or tail.islower():
            return match[1] + tail
        return f"{match[1]}-{tail}"

    return _LINE_END_HYPHEN.sub(join, text)


def split_text(text: str, limit: int = MAX_CHUNK_CHARS) -> list[str]:
    """Pack paragraphs into chunks of at most `limit` characters.

    Paragraph boundaries are preferred; a paragraph longer than the limit is
    cut between words, and only a single word longer than the limit is cut
    inside (there is no better place for it).
    """
    pieces: list[str] = []
    for paragraph in text.split("\n\n"):
        paragraph = paragraph.strip()
        if len(paragraph) <= limit:
            if paragraph:
                pieces.append(paragraph)
        else:
            pieces.extend(_split_words(paragraph, limit))

    chunks: list[str] = []
    current = ""
    for piece in pieces:
        if current and len(current) + 2 + len(piece) > limit:
            chunks.append(current)
            current = ""
        current = f"{current}\n\n{piece}" if current else piece
    if current:
        chunks.append(current)
    return chunks


def _split_words(paragraph: str, limit: int) -> list[str]:
    parts: list[str] = []
    current = ""
    for word in paragraph.split(" "):
        while len(word) > limit:
            if current:
                parts.append(current)
                current = ""
            parts.append(word[:limit])
            word = word[limit:]
        if current and len(current) + 1 + len(word) > limit:
            parts.append(current)
            current = ""
        current = f"{current} {word}" if current else word
    if current:
        parts.append(current)
    return parts


# --- metadata ----------------------------------------------------------------


def _title(metadata: dict[str, str], doc: pymupdf.Document, filename: str) -> str:
    title = _clean(metadata.get("title") or "")
    if is_meaningful_title(title):
        return _truncate(title, MAX_TITLE_CHARS)
    return _largest_font_title(doc) or humanise_filename(filename)


def is_meaningful_title(title: str) -> bool:
    """False for metadata titles that name the file or the tool rather than the work."""
    if len(title) < 2 or title.lower() in _JUNK_TITLES:
        return False
    return not any(pattern.search(title) for pattern in _JUNK_TITLE_PATTERNS)


def _largest_font_title(doc: pymupdf.Document) -> str:
    """The first page's largest-font horizontal lines near the top, if that font
    stands out from the body text."""
    try:
        page = doc.load_page(0)
        clip = pymupdf.Rect(page.rect)
        clip.y1 = clip.y0 + clip.height * _TITLE_REGION
        layout = page.get_text("dict", flags=_TEXT_FLAGS, clip=clip)
    except MUPDF_ERRORS:
        return ""

    lines: list[tuple[float, str]] = []
    sizes: Counter[float] = Counter()
    for block in layout.get("blocks", []):
        for line in block.get("lines", []):
            # Vertical text, such as arXiv's margin stamp, is large but never a title.
            if abs(line["dir"][1]) > 0.1:
                continue
            spans = [span for span in line["spans"] if span["text"].strip()]
            if not spans:
                continue
            for span in spans:
                sizes[round(span["size"], 1)] += len(span["text"])
            text = _clean("".join(span["text"] for span in line["spans"]))
            lines.append((max(span["size"] for span in spans), text))
    if not lines:
        return ""

    largest = max(size for size, _ in lines)
    body_size = sizes.most_common(1)[0][0]
    if largest < body_size * _TITLE_MIN_SIZE_RATIO:
        return ""
    return _truncate(" ".join(_first_run(lines, largest)), MAX_TITLE_CHARS)


def _first_run(lines: list[tuple[float, str]], size: float) -> list[str]:
    """The first consecutive lines set in `size`: a title wrapped over several lines."""
    run: list[str] = []
    for line_size, text in lines:
        if abs(line_size - size) <= _SIZE_TOLERANCE:
            run.append(text)
        elif run:
            break
    return run


def _truncate(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0]
    return cut or text[:limit]


def humanise_filename(filename: str) -> str:
    """A title made from the file name: "my_paper-v2.pdf" -> "my paper v2"."""
    stem = PurePath(filename.replace("\\", "/")).stem if filename else ""
    return _clean(re.sub(r"[_-]+", " ", stem)) or "Untitled PDF"


def _authors(raw: str) -> str:
    names = [_clean(name) for name in _AUTHOR_SEPARATORS.split(raw)]
    return ", ".join(name for name in names if name and name.lower() not in _JUNK_AUTHORS)


def _find_doi(texts: list[str]) -> str:
    """The first DOI in `texts`, which are ordered by trust: metadata, then page 1, 2."""
    for text in texts:
        match = _DOI.search(text)
        if match:
            return _trim_doi(match.group())
    return ""


def _trim_doi(doi: str) -> str:
    # Trailing punctuation usually belongs to the sentence, but a ")" is part of
    # the DOI when it closes a "(" inside it, as in Wiley's "(SICI)" DOIs.
    while doi and doi[-1] in ".,;)":
        if doi[-1] == ")" and doi.count("(") >= doi.count(")"):
            break
        doi = doi[:-1]
    return doi
