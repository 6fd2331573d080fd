"""What the library runs inside sandbox children (apps.core.sandbox): parsing
files and rendering page previews. Everything here sees untrusted bytes, so
it runs only in a child with limits; the calling sides are
apps.library.ingest.isolated and apps.library.previews. Loaded into the
zygote by autodiscovery.

Results go back as JSON (apps.core.sandbox.codec), never as pickles; figure
and photo pixels and rendered PNGs go back as separate blobs, which the
parent checks (size, image signature) before it uses them.
"""

from __future__ import annotations

import importlib
import io
import math

import pymupdf

from apps.core.sandbox import sandbox_task
from apps.core.sandbox.codec import to_jsonable
from apps.library.formats import FORMATS
from apps.library.ingest.parsing.images import open_image, upright_frames
from apps.library.ingest.parsing.limits import (
    MAX_FIGURE_IMAGE_BYTES,
    MAX_FIGURE_IMAGES_BYTES,
    ParseLimits,
    check_output,
)
from apps.library.ingest.parsing.types import (
    OcrNeeded,
    ParsedDocument,
    ParseOptions,
    UnreadableDocument,
)
from apps.library.ingest.pipeline import parse_bytes

# Every format's reader is imported here, in the zygote, so a forked child
# starts with its parser loaded (parse_bytes finds them by name).
for _module in dict.fromkeys(f.reader.partition(":")[0] for f in FORMATS):
    importlib.import_module(_module)


@sandbox_task("library.parse")
def parse_files(params: dict, blobs: list[bytes]) -> tuple[dict, list[bytes]]:
    """A batch of files (several small notes share one child); each gets
    its own result: a parsed document (its figures' pixels as blobs, indexed
    by `images`), the reason it was refused, or `long` when it needs OCR and
    this is the quick lane."""
    limits = ParseLimits(**params["limits"])
    results: list[dict] = []
    images: list[bytes] = []
    for item, data in zip(params["items"], blobs, strict=True):
        try:
            parsed = parse_bytes(
                data,
                kind=item["kind"],
                filename=item["filename"],
                url=item.get("url", ""),
                options=ParseOptions(**item["options"]),
                limits=limits,
            )
            check_output(parsed, limits=limits)
        except OcrNeeded as exc:
            results.append({"long": str(exc), "ocr_pages": exc.pages})
            continue
        except UnreadableDocument as exc:
            results.append({"refused": str(exc)})
            continue
        indexes = _images_apart(parsed, images)
        results.append({"parsed": to_jsonable(parsed), "images": indexes})
    return {"results": results}, images


def _images_apart(parsed: ParsedDocument, images: list[bytes]) -> list[int | None]:
    """Move each figure's pixels out of the JSON into `images` (the blobs),
    within the per-image and per-document budgets; returns, per figure, the
    index of its blob or None."""
    indexes: list[int | None] = []
    spent = 0
    for figure in parsed.figures:
        image, figure.image = figure.image, b""
        if not image:
            indexes.append(None)
            continue
        if len(image) > MAX_FIGURE_IMAGE_BYTES or spent + len(image) > MAX_FIGURE_IMAGES_BYTES:
            parsed.warnings.append(
                f"a {figure.kind} on page {figure.page} is too large to describe; "
                "its caption alone is indexed"
            )
            indexes.append(None)
            continue
        spent += len(image)
        indexes.append(len(images))
        images.append(image)
    return indexes


@sandbox_task("library.render_page")
def render_page(params: dict, blobs: list[bytes]) -> tuple[dict, list[bytes]]:
    """One page as a PNG: a PDF page within a pixel budget (the zoom is the
    preferred one unless the page is so large that the longest side or the
    pixel count would pass the budget; then it shrinks to fit), or a frame of
    an uploaded image, turned upright and no larger than `max_side`."""
    number = int(params["page"])
    if params.get("kind") == "image":
        return _render_image(params["path"], number, max_side=int(params["max_side"]))
    with pymupdf.open(params["path"]) as pdf:
        if not 1 <= number <= pdf.page_count:
            return {"missing": True}, []
        page = pdf[number - 1]
        zoom = budget_zoom(
            page.rect.width,
            page.rect.height,
            preferred=float(params["zoom"]),
            max_side=int(params["max_side"]),
            max_pixels=int(params["max_pixels"]),
        )
        pixmap = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom))
        return {"width": pixmap.width, "height": pixmap.height}, [pixmap.tobytes("png")]


def _render_image(path: str, number: int, *, max_side: int) -> tuple[dict, list[bytes]]:
    with open(path, "rb") as handle:
        data = handle.read()
    try:
        # The parser's own size checks: a file refused there is refused here.
        frames = upright_frames(open_image(data), first=number - 1, count=1)
    except UnreadableDocument:
        return {"missing": True}, []
    if not frames:
        return {"missing": True}, []
    frame = frames[0]
    if frame.mode not in ("RGB", "L"):
        frame = frame.convert("RGB")
    frame.thumbnail((max_side, max_side))
    buffer = io.BytesIO()
    frame.save(buffer, format="PNG")
    return {"width": frame.width, "height": frame.height}, [buffer.getvalue()]


def budget_zoom(
    width: float, height: float, *, preferred: float, max_side: int, max_pixels: int
) -> float:
    width, height = max(width, 1.0), max(height, 1.0)
    by_side = max_side / max(width, height)
    by_area = math.sqrt(max_pixels / (width * height))
    # A hair under, so rounding up to whole pixels never passes the budget.
    return min(preferred, by_side, by_area) * 0.999
