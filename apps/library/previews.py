"""Page previews (a PDF's pages, an uploaded image turned upright): rendered
in a sandbox child, a few at a time, cached on disk.

A page is rendered within a pixel budget (longest side ≤ MAX_SIDE, at most
MAX_PIXELS; the zoom comes from the page's size, so a 14,400-point page is
drawn small instead of at 26,000 pixels), by a child process with time and
memory limits (the PDF is untrusted), never on the web process's event loop:
the view awaits a worker thread that waits on the child, and at most
JARVIS_PREVIEW_CONCURRENCY renders run at once. The PNG is kept under
`cache/previews/` by the document's content hash and page, so each page of
each file is rendered once, whoever views it; a page that could not be
rendered is remembered too, so a hostile file costs one render, not one per
viewer. An uploaded image is drawn no larger than IMAGE_SIDE on its
longest side (the same pixel checks as the parser's, apps.library.ingest.parsing.images).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
from pathlib import Path

from django.conf import settings
from django.db import transaction

from apps.core.sandbox import ChildLimits, SandboxUnavailable, run_in_child
from apps.library.models import Document

logger = logging.getLogger(__name__)

PREVIEW_PAGES = 12
PREFERRED_ZOOM = 1.3
MAX_SIDE = 2000
MAX_PIXELS = 4_000_000
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
IMAGE_SIDE = 1400  # an uploaded photo shown on its page
# Bumped when the rendering changes, so old cached images are not served.
RENDER_VERSION = 1

_semaphore: asyncio.Semaphore | None = None
_in_flight: dict[tuple[str, int], asyncio.Future] = {}


def cache_folder(content_hash: str) -> Path:
    return Path(settings.PREVIEW_CACHE_DIR) / content_hash[:2] / content_hash


def _cached(content_hash: str, number: int) -> tuple[Path, Path]:
    folder = cache_folder(content_hash)
    stem = f"p{number}-v{RENDER_VERSION}"
    return folder / f"{stem}.png", folder / f"{stem}.failed"


async def page_png(*, content_hash: str, path: Path, number: int, kind: str) -> Path | None:
    """The cached PNG of page `number` of the file at `path` (`kind` "pdf" or
    "image": a frame of it), rendering it first if needed; None when the page
    does not exist or cannot be rendered within the limits."""
    png, failed = _cached(content_hash, number)
    if png.exists():
        return png
    if failed.exists():
        return None
    key = (content_hash, number)
    if key in _in_flight:  # someone is rendering this very page: wait for theirs
        return await asyncio.shield(_in_flight[key])
    future = asyncio.get_running_loop().create_future()
    _in_flight[key] = future
    try:
        async with _limit():
            result = await asyncio.to_thread(_render_to_cache, path, kind, number, png, failed)
    except BaseException as exc:
        future.set_exception(exc)
        future.exception()  # retrieved here: waiters re-raise it, nobody else must
        raise
    else:
        future.set_result(result)
    finally:
        _in_flight.pop(key, None)
    return result


def _limit() -> asyncio.Semaphore:
    global _semaphore
    if _semaphore is None:
        _semaphore = asyncio.Semaphore(settings.PREVIEW_CONCURRENCY)
    return _semaphore


def _render_to_cache(path: Path, kind: str, number: int, png: Path, failed: Path) -> Path | None:
    try:
        outcome = run_in_child(
            "library.render_page",
            params={
                "path": str(path),
                "kind": kind,
                "page": number,
                "zoom": PREFERRED_ZOOM,
                "max_side": MAX_SIDE if kind == "pdf" else IMAGE_SIDE,
                "max_pixels": MAX_PIXELS,
            },
            limits=ChildLimits(
                wall_seconds=settings.PREVIEW_TIMEOUT_SECONDS,
                cpu_seconds=settings.PREVIEW_TIMEOUT_SECONDS,
                memory_mb=settings.PREVIEW_MEMORY_MB,
            ),
            max_result_bytes=64 * 1024 * 1024,
        )
    except SandboxUnavailable:
        logger.exception("no sandbox for rendering a preview")
        return None  # not remembered as failed: the next view tries again
    png.parent.mkdir(parents=True, exist_ok=True)
    if not outcome.ok or outcome.value.get("missing") or not outcome.blobs:
        if not outcome.ok:
            logger.warning("preview of %s page %s failed: %s", path, number, outcome.failure)
        failed.touch()
        return None
    if not outcome.blobs[0].startswith(PNG_SIGNATURE):
        # The child saw hostile bytes: what it sends back is checked, not trusted.
        logger.warning("preview of %s page %s: the renderer sent no PNG", path, number)
        failed.touch()
        return None
    partial = png.with_name(f".{png.name}.partial")
    partial.write_bytes(outcome.blobs[0])
    partial.replace(png)
    return png


def previews_release(content_hash: str) -> None:
    """Forget the cached pages of bytes no document holds any more."""
    if not content_hash or Document.objects.filter(content_hash=content_hash).exists():
        return
    folder = cache_folder(content_hash)
    if folder.is_dir():
        with contextlib.suppress(FileNotFoundError):
            shutil.rmtree(folder)


def release_after_commit(content_hash: str) -> None:
    transaction.on_commit(lambda: previews_release(content_hash))
