"""What the library runs inside sandbox children (apps.core.sandbox): parsing
files and rendering PDF pages. Everything here sees untrusted bytes, so it
runs only in a child with limits; the calling side is
apps.library.ingest.isolated. Loaded into the zygote by autodiscovery.

Results go back as JSON (apps.core.sandbox.codec), never as pickles.
"""

from __future__ import annotations

import math

import pymupdf

from apps.core.sandbox import sandbox_task
from apps.core.sandbox.codec import to_jsonable
from apps.library.ingest.parsing.limits import ParseLimits, check_output
from apps.library.ingest.parsing.types import UnreadableDocument
from apps.library.ingest.pipeline import parse_bytes


@sandbox_task("library.parse")
def parse_files(params: dict, blobs: list[bytes]) -> tuple[dict, list[bytes]]:
    """A batch of files (several small notes share one child); each gets
    its own result, a parsed document or the reason it was refused."""
    limits = ParseLimits(**params["limits"])
    results = []
    for item, data in zip(params["items"], blobs, strict=True):
        try:
            parsed = parse_bytes(
                data,
                kind=item["kind"],
                filename=item["filename"],
                url=item.get("url", ""),
                limits=limits,
            )
            check_output(parsed, limits=limits)
        except UnreadableDocument as exc:
            results.append({"refused": str(exc)})
            continue
        results.append({"parsed": to_jsonable(parsed)})
    return {"results": results}, []


@sandbox_task("library.render_page")
def render_page(params: dict, blobs: list[bytes]) -> tuple[dict, list[bytes]]:
    """One PDF page as a PNG within a pixel budget: the zoom is the preferred
    one unless the page is so large that the longest side or the pixel count
    would pass the budget; then it shrinks to fit."""
    with pymupdf.open(params["path"]) as pdf:
        number = int(params["page"])
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


def budget_zoom(
    width: float, height: float, *, preferred: float, max_side: int, max_pixels: int
) -> float:
    width, height = max(width, 1.0), max(height, 1.0)
    by_side = max_side / max(width, height)
    by_area = math.sqrt(max_pixels / (width * height))
    # A hair under, so rounding up to whole pixels never passes the budget.
    return min(preferred, by_side, by_area) * 0.999
