"""Image uploads (PNG, JPEG, WebP, HEIC/HEIF, TIFF): the text in them by OCR,
and the photo itself as a figure a vision model may describe afterwards.

Pillow reads them; HEIC through the pillow-heif plugin. An image is opened
lazily (only its header) and refused before decoding when it has more than
MAX_IMAGE_PIXELS: a small PNG can declare a gigapixel canvas. It is turned
upright by its EXIF orientation first, as phones store sideways photos with a
tag rather than rotated pixels. A multi-page TIFF (what many scanners write)
is read page by page, up to MAX_FRAMES.
"""

from __future__ import annotations

import hashlib
import io
import warnings

import pillow_heif
from PIL import Image, ImageOps, UnidentifiedImageError

from .chunking import pack_text
from .figures import vision_jpeg
from .ocr import check_languages, no_text_warning, recognise
from .types import (
    ChunkDraft,
    Figure,
    OcrNeeded,
    ParsedDocument,
    ParseOptions,
    UnreadableDocument,
)

# Registered once per process; Pillow then opens HEIC/HEIF like any format.
pillow_heif.register_heif_opener()

FORMATS = {
    "PNG": "PNG",
    "JPEG": "JPEG",
    "MPO": "JPEG",
    "WEBP": "WebP",
    "HEIF": "HEIC",
    "TIFF": "TIFF",
}
# 64 megapixels: the largest phone cameras' full resolution; a scan of A3 at 600 dpi is 70.
MAX_IMAGE_PIXELS = 64_000_000
MAX_FRAMES = 50
_MB = 1_000_000


def open_image(data: bytes) -> Image.Image:
    """The image, header read and size checked, not yet decoded; or UnreadableDocument."""
    try:
        with warnings.catch_warnings():
            # Pillow warns about huge images by its own, larger limit (and
            # refuses past twice that); our own limit below says how large.
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(data))
    except Image.DecompressionBombError:
        raise UnreadableDocument(_too_large_reason()) from None
    except UnidentifiedImageError:
        raise UnreadableDocument("not a readable image: damaged, or not an image at all") from None
    except (OSError, ValueError, SyntaxError) as exc:
        raise UnreadableDocument(f"not a readable image ({_short(exc)})") from None
    if image.format not in FORMATS:
        raise UnreadableDocument(f"images in {image.format or 'this'} format are not read")
    if image.width * image.height > MAX_IMAGE_PIXELS:
        raise UnreadableDocument(_too_large_reason(image))
    return image


def _too_large_reason(image: Image.Image | None = None) -> str:
    size = f" ({image.width:,} x {image.height:,})" if image is not None else ""
    return f"refused: the image is larger than {MAX_IMAGE_PIXELS // _MB} megapixels{size}"


def _short(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:120] or type(exc).__name__


def upright_frames(
    image: Image.Image, *, first: int = 0, count: int = MAX_FRAMES
) -> list[Image.Image]:
    """Pages (frames) `first`… (at most `count`, and never past MAX_FRAMES)
    decoded and turned by their EXIF orientation."""
    frames = []
    total = min(getattr(image, "n_frames", 1), MAX_FRAMES)
    for index in range(first, min(total, first + count)):
        try:
            image.seek(index)
            frame = image.copy()
            frame.load()
        except (OSError, ValueError, SyntaxError, EOFError) as exc:
            if not frames:
                raise UnreadableDocument(f"not a readable image ({_short(exc)})") from None
            break  # a damaged later page: keep the ones read
        if frame.width * frame.height > MAX_IMAGE_PIXELS:
            raise UnreadableDocument(_too_large_reason(frame))
        frames.append(ImageOps.exif_transpose(frame) or frame)
    return frames


def extract_image(
    data: bytes, *, filename: str, fallback_title: str, options: ParseOptions
) -> ParsedDocument:
    image = open_image(data)
    frames = upright_frames(image)
    total = getattr(image, "n_frames", 1)
    warnings_: list[str] = []
    if total > MAX_FRAMES:
        warnings_.append(f"only the first {MAX_FRAMES} of {total} pages were read")
    parsed = ParsedDocument(title=fallback_title, kind="image", chunks=[], warnings=warnings_)
    if options.ocr_languages:
        if options.ocr_elsewhere:
            raise OcrNeeded(len(frames))
        languages = check_languages(options.ocr_languages)
        for number, frame in enumerate(frames, start=1):
            text = recognise(frame, languages=languages)
            parsed.ocr_pages.append(number)
            if not text:
                parsed.ocr_empty_pages.append(number)
                continue
            section = f"Page {number}" if len(frames) > 1 else ""
            parsed.chunks.extend(
                ChunkDraft(text=piece, section=section, page=number, origin="ocr")
                for piece in pack_text(text)
            )
        if parsed.ocr_empty_pages:
            parsed.warnings.append(
                no_text_warning(parsed.ocr_empty_pages, single_image=len(frames) == 1)
            )
    else:
        parsed.warnings.append("text in the image was not read: OCR is turned off")
    parsed.figures.append(
        Figure(
            kind="photo",
            page=1,
            caption="",
            image_hash=hashlib.sha256(data).hexdigest(),
            image=vision_jpeg(frames[0]) if options.figure_images else b"",
            media_type="image/jpeg",
        )
    )
    return parsed
