"""Figures in a PDF: raster images large enough to be content (not logos or
rules), each with the caption printed near it ("Figure 3: …" below or above).

Only placed raster images are found; charts drawn as vector paths are not
(their labels are page text anyway). A page-sized image is a scan, not a
figure, and is left to OCR. Each figure is identified by the hash of its
image bytes, so an unchanged figure is never described twice.
"""

from __future__ import annotations

import hashlib
import io
import re

import pymupdf
from PIL import Image

from .types import Figure

MAX_FIGURES = 20  # per document: each may cost a vision-model call
MIN_PIXELS = 40_000  # ~200 x 200: smaller images are icons, logos and rules
MIN_SHOWN_POINTS = 72  # shorter side as placed on the page: one inch
MAX_PAGE_SHARE = 0.85  # an image covering more of the page is a scan or a background
MAX_FIGURE_PIXELS = 40_000_000
CAPTION_GAP = 60  # points between a figure and its caption, at most
MAX_CAPTION_CHARS = 600
VISION_MAX_SIDE = 1568  # what vision models read anyway; more only costs upload time
VISION_JPEG_QUALITY = 85
_CAPTION_START = re.compile(
    r"^\s*(fig(?:ure|\.)?|abb(?:ildung|\.)?|illustration|chart|diagram|photo|plate|"
    r"schaubild|grafik)\s*[\dIVX]*[.:)]?",
    re.IGNORECASE,
)
_TEXT_FLAGS = pymupdf.TEXTFLAGS_TEXT & ~pymupdf.TEXT_PRESERVE_LIGATURES
# What MuPDF raises on a broken object inside a document that opened: the
# Python layer's RuntimeError/ValueError, and its own FzError* classes (a bad
# content stream raises FzErrorFormat, which derives from Exception only).
MUPDF_ERRORS = (RuntimeError, ValueError, pymupdf.mupdf.FzErrorBase)
_SPACES = re.compile(r"\s+")


def pdf_figures(doc: pymupdf.Document, *, pages: list[int], with_images: bool) -> list[Figure]:
    """Up to MAX_FIGURES figures in page order, looked for on `pages` (1-based):
    the pages that hold images, less those read by OCR (whose one big image is
    the page itself). Placing a page's images costs a pass over its content,
    so pages without any are never visited."""
    figures: list[Figure] = []
    seen: set[int] = set()
    for number in pages:
        try:
            page = doc.load_page(number - 1)
            placements = page.get_image_info(xrefs=True)
            blocks = _text_blocks(page) if placements else []
        except MUPDF_ERRORS:
            continue  # a broken page is reported by the text extraction
        candidates = [p for p in placements if _is_figure(p, page.rect, seen)]
        if not candidates:
            continue
        for placement in candidates:
            seen.add(placement["xref"])
            figure = _figure(doc, placement, number, blocks, with_images)
            if figure is not None:
                figures.append(figure)
            if len(figures) >= MAX_FIGURES:
                return figures
    return figures


def _is_figure(placement: dict, page_rect: pymupdf.Rect, seen: set[int]) -> bool:
    xref = placement.get("xref") or 0
    if xref <= 0 or xref in seen:
        return False  # inline images have no xref; a repeated one is a logo
    pixels = placement["width"] * placement["height"]
    if pixels < MIN_PIXELS or pixels > MAX_FIGURE_PIXELS:
        return False
    box = pymupdf.Rect(placement["bbox"]) & page_rect
    if box.is_empty or min(box.width, box.height) < MIN_SHOWN_POINTS:
        return False
    return box.get_area() <= MAX_PAGE_SHARE * page_rect.get_area()


def _text_blocks(page: pymupdf.Page) -> list[tuple[pymupdf.Rect, str]]:
    blocks = page.get_text("blocks", flags=_TEXT_FLAGS)
    return [
        (pymupdf.Rect(b[:4]), _SPACES.sub(" ", b[4]).strip())
        for b in blocks
        if b[6] == 0 and b[4].strip()
    ]


def find_caption(box: pymupdf.Rect, blocks: list[tuple[pymupdf.Rect, str]]) -> str:
    """The caption of a figure at `box`: a nearby text block that starts like
    one ("Figure 2:", "Abb. 3"), below the figure first, then above; failing
    that, a short block right below it."""
    below, above = [], []
    for rect, text in blocks:
        if rect.x1 < box.x0 or rect.x0 > box.x1:
            continue  # not under or over the figure
        if 0 <= rect.y0 - box.y1 <= CAPTION_GAP:
            below.append((rect.y0 - box.y1, text))
        elif 0 <= box.y0 - rect.y1 <= CAPTION_GAP:
            above.append((box.y0 - rect.y1, text))
    for group in (sorted(below), sorted(above)):
        for _, text in group:
            if _CAPTION_START.match(text):
                return text[:MAX_CAPTION_CHARS]
    if below:
        _, text = min(below)
        if len(text) <= MAX_CAPTION_CHARS // 2:
            return text
    return ""


def _figure(
    doc: pymupdf.Document, placement: dict, number: int, blocks, with_images: bool
) -> Figure | None:
    xref = placement["xref"]
    try:
        raw = doc.xref_stream_raw(xref) or b""
        image = _pixels(doc, xref) if with_images else b""
    except (*MUPDF_ERRORS, OSError):
        return None  # an image MuPDF cannot decode is no figure to describe
    digest = hashlib.sha256(raw or str(placement.get("digest")).encode()).hexdigest()
    return Figure(
        kind="figure",
        page=number,
        caption=find_caption(pymupdf.Rect(placement["bbox"]), blocks),
        image_hash=digest,
        image=image,
        media_type="image/jpeg",
    )


def _pixels(doc: pymupdf.Document, xref: int) -> bytes:
    pixmap = pymupdf.Pixmap(doc, xref)
    if pixmap.alpha:
        pixmap = pymupdf.Pixmap(pixmap, 0)
    if pixmap.colorspace is None or pixmap.colorspace.n not in (1, 3):
        pixmap = pymupdf.Pixmap(pymupdf.csRGB, pixmap)  # CMYK, indexed, …
    mode = "L" if pixmap.n == 1 else "RGB"
    image = Image.frombytes(mode, (pixmap.width, pixmap.height), pixmap.samples)
    return vision_jpeg(image)


def vision_jpeg(image: Image.Image) -> bytes:
    """A copy small enough for a vision model, as JPEG."""
    copy = image.convert("RGB")
    copy.thumbnail((VISION_MAX_SIDE, VISION_MAX_SIDE), Image.Resampling.LANCZOS)
    buffer = io.BytesIO()
    copy.save(buffer, format="JPEG", quality=VISION_JPEG_QUALITY)
    return buffer.getvalue()
