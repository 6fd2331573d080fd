"""Parsing in a child process with limits: the only way Jarvis parses a file.

Two lanes. Every file first gets the **quick** lane: JARVIS_PARSE_QUICK_SECONDS
of wall-clock time, and no OCR. A file that needs longer, makes more than
JARVIS_PARSE_QUICK_MAX_CHUNKS passages (which take long to embed), or has
scanned pages or an image to read by OCR raises ParseTooSlow and is handed to
the **long** lane, which runs one file at a time with the full limits
(JARVIS_PARSE_TIMEOUT_SECONDS / _CPU_SECONDS / _MEMORY_MB). Its wall-clock
limit grows by JARVIS_OCR_PAGE_SECONDS for each scanned page the quick lane
counted (at most JARVIS_OCR_MAX_PAGES), so a 100-page scan is not cut off
while a file that is merely slow still is. OCR programs run in the child's
process group and are killed with it. So a hostile or merely huge file holds
at most one worker thread for long, and ordinary notes never queue behind it.

Figure and photo pixels (for the vision model, which runs in the worker
after the parse) come back as blobs beside the JSON, each checked here: its
size within the caps, its bytes a PNG or JPEG as the figure claims.

Small notes are parsed in batches (one child for many files): forking costs
more than parsing a note. A batch that fails as a whole is retried file by
file, so one bad file never takes its neighbours down with it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace

from django.conf import settings

from apps.core.sandbox import ChildLimits, ChildOutcome, run_in_child
from apps.core.sandbox.codec import DecodeError, from_jsonable
from apps.library.formats import FORMATS
from apps.library.formats import IMAGE_SIGNATURES as KNOWN_IMAGES
from apps.library.ingest.parsing.limits import (
    MAX_FIGURE_IMAGE_BYTES,
    MAX_FIGURE_IMAGES_BYTES,
    ParseLimits,
)
from apps.library.ingest.parsing.types import ParsedDocument, ParseOptions, UnreadableDocument

QUICK, LONG = "quick", "long"
# Notes this small are batched; a batch holds at most this many bytes and files.
BATCHABLE_KINDS = tuple(f.kind for f in FORMATS if f.batched)
BATCHABLE_BYTES = 256 * 1024
BATCH_BYTES = 2 * 1024 * 1024
BATCH_FILES = 32
# What a figure's pixels must start with, by the media type it claims.
IMAGE_SIGNATURES = {
    image.media_type: image.magic
    for image in KNOWN_IMAGES
    if image.media_type in ("image/png", "image/jpeg")
}


class ParseFailed(UnreadableDocument):
    """The document fails with this reason (a cap, a limit, a refusal)."""


class ParserCrashed(ParseFailed):
    """The parser process died on this file (a crash, not a limit)."""


class ParseTooSlow(Exception):
    """Over the quick lane's time or passages, or in need of OCR: the file
    belongs in the long lane. `ocr_pages`: scanned pages it holds (at most
    JARVIS_OCR_MAX_PAGES), which lengthen its time limit there."""

    def __init__(self, reason: str, *, ocr_pages: int = 0) -> None:
        super().__init__(reason)
        self.ocr_pages = ocr_pages


class ParseCancelled(Exception):
    """The person cancelled (or a newer request replaced) this parse."""


@dataclass(frozen=True)
class ParseItem:
    data: bytes
    kind: str
    filename: str
    url: str = ""
    options: ParseOptions = field(default_factory=ParseOptions)

    @property
    def batchable(self) -> bool:
        return self.kind in BATCHABLE_KINDS and len(self.data) <= BATCHABLE_BYTES


Result = ParsedDocument | Exception


def parse_limits() -> ParseLimits:
    return ParseLimits(
        max_pdf_pages=settings.MAX_PDF_PAGES,
        max_unpacked_mb=settings.MAX_UNPACKED_MB,
        max_zip_entries=settings.MAX_ZIP_ENTRIES,
        max_zip_ratio=settings.MAX_ZIP_RATIO,
        max_chunks=settings.MAX_CHUNKS,
        max_text_mb=settings.MAX_TEXT_MB,
    )


def long_lane_seconds(ocr_pages: int | None = None) -> int:
    """The long lane's wall-clock limit for a file with `ocr_pages` scanned
    pages. None: not counted (`kb add`, a digest's paper, which skip the
    quick lane): the plain limit, so a slow parser is not given OCR's time."""
    pages = min(max(0, ocr_pages or 0), settings.OCR_MAX_PAGES)
    return settings.PARSE_TIMEOUT_SECONDS + pages * settings.OCR_PAGE_SECONDS


def child_limits(lane: str, ocr_pages: int | None = None) -> ChildLimits:
    wall = settings.PARSE_QUICK_SECONDS if lane == QUICK else long_lane_seconds(ocr_pages)
    return ChildLimits(
        wall_seconds=wall,
        cpu_seconds=settings.PARSE_CPU_SECONDS,
        memory_mb=settings.PARSE_MEMORY_MB,
    )


def parse_one(
    item: ParseItem,
    *,
    lane: str = LONG,
    ocr_pages: int | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> ParsedDocument:
    """Parse one file in a child. Raises ParseFailed (the document fails with
    its reason), ParseTooSlow (quick lane only), or ParseCancelled."""
    (result,) = parse_many([item], lane=lane, ocr_pages=ocr_pages, cancelled=cancelled)
    if isinstance(result, Exception):
        raise result
    return result


def parse_many(
    items: Sequence[ParseItem],
    *,
    lane: str,
    ocr_pages: int | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> list[Result]:
    """Parse files in one child; each result is a ParsedDocument or the
    exception parse_one would raise for it. `ocr_pages` (long lane, one
    file): its scanned pages as the quick lane counted them, which lengthen
    the time limit (None: not counted, the plain limit)."""
    if not items:
        return []
    outcome = run_in_child(
        "library.parse",
        params={
            "items": [
                {
                    "kind": i.kind,
                    "filename": i.filename,
                    "url": i.url,
                    "options": asdict(replace(i.options, ocr_elsewhere=lane == QUICK)),
                }
                for i in items
            ],
            "limits": asdict(parse_limits()),
        },
        blobs=[item.data for item in items],
        limits=child_limits(lane, ocr_pages),
        cancelled=cancelled,
    )
    if outcome.ok:
        results = _results(outcome, len(items))
        return [_decoded(result, lane, outcome.blobs) for result in results]
    if outcome.failure == "cancelled":
        return [ParseCancelled() for _ in items]
    if len(items) > 1:
        return [parse_many([item], lane=lane, cancelled=cancelled)[0] for item in items]
    return [_failure(outcome, lane, ocr_pages)]


def _results(outcome: ChildOutcome, count: int) -> list:
    results = outcome.value.get("results") if outcome.value else None
    if not isinstance(results, list) or len(results) != count:
        return [{"garbled": True}] * count
    return results


def _decoded(result: dict, lane: str, blobs: list[bytes]) -> Result:
    if not isinstance(result, dict):
        return ParserCrashed("the parser returned something unreadable")
    if "refused" in result:
        return ParseFailed(str(result["refused"])[:1000])
    if "long" in result:
        pages = result.get("ocr_pages")
        if lane != QUICK or type(pages) is not int:
            return ParserCrashed("the parser returned something unreadable")
        pages = min(max(0, pages), settings.OCR_MAX_PAGES)
        return ParseTooSlow(str(result["long"])[:200], ocr_pages=pages)
    try:
        parsed = from_jsonable(ParsedDocument, result.get("parsed"))
    except (DecodeError, TypeError, ValueError):
        return ParserCrashed("the parser returned something unreadable")
    _attach_images(parsed, result.get("images"), blobs)
    if lane == QUICK and len(parsed.chunks) > settings.PARSE_QUICK_MAX_CHUNKS:
        return ParseTooSlow(f"{len(parsed.chunks)} passages")
    return parsed


def _attach_images(parsed: ParsedDocument, indexes, blobs: list[bytes]) -> None:
    """Give each figure the pixels the child sent for it, if they pass the
    checks; a figure whose pixels do not is indexed by its caption alone."""
    if not isinstance(indexes, list) or len(indexes) != len(parsed.figures):
        indexes = [None] * len(parsed.figures)
    spent = 0
    for figure, index in zip(parsed.figures, indexes, strict=True):
        figure.image = b""  # only ever from a checked blob, never inline in the JSON
        if type(index) is not int or not 0 <= index < len(blobs):
            continue
        image = blobs[index]
        signature = IMAGE_SIGNATURES.get(figure.media_type)
        spent += len(image)
        if (
            signature is None
            or not image.startswith(signature)
            or len(image) > MAX_FIGURE_IMAGE_BYTES
            or spent > MAX_FIGURE_IMAGES_BYTES
        ):
            continue
        figure.image = image


def _failure(outcome: ChildOutcome, lane: str, ocr_pages: int | None = None) -> Exception:
    failure = outcome.failure
    if failure == "timeout":
        if lane == QUICK:
            return ParseTooSlow(f"over {settings.PARSE_QUICK_SECONDS} s")
        seconds = long_lane_seconds(ocr_pages)
        if seconds > settings.PARSE_TIMEOUT_SECONDS:
            return ParseFailed(
                f"parsing took longer than {seconds} s, the limit with time for OCR "
                "(JARVIS_PARSE_TIMEOUT_SECONDS plus JARVIS_OCR_PAGE_SECONDS a scanned page)"
            )
        return ParseFailed(
            f"parsing took longer than {settings.PARSE_TIMEOUT_SECONDS} s, the limit "
            "(JARVIS_PARSE_TIMEOUT_SECONDS)"
        )
    if failure == "cpu":
        return ParseFailed(
            f"parsing used more than {settings.PARSE_CPU_SECONDS} s of processor time, the "
            "limit (JARVIS_PARSE_CPU_SECONDS)"
        )
    if failure == "memory":
        return ParseFailed(
            f"parsing needed more than {settings.PARSE_MEMORY_MB} MB of memory, the limit "
            "(JARVIS_PARSE_MEMORY_MB)"
        )
    if failure == "oversized":
        return ParseFailed("the parser's result was too large to index")
    if failure == "error":
        return ParseFailed(f"the parser failed: {outcome.detail}"[:1000])
    return ParserCrashed(f"the parser crashed ({outcome.detail or 'no reason given'})")


class CancelCheck:
    """A cancellation test that asks the database at most once a second:
    `still_wanted()` is whatever the caller needs (a document's queue token
    unchanged, a job not yet marked failed)."""

    def __init__(self, still_wanted: Callable[[], bool], every: float = 1.0) -> None:
        self.still_wanted = still_wanted
        self.every = every
        self.checked = 0.0
        self.cancelled = False

    def __call__(self) -> bool:
        now = time.monotonic()
        if not self.cancelled and now - self.checked >= self.every:
            self.checked = now
            self.cancelled = not self.still_wanted()
        return self.cancelled

    def now(self) -> bool:
        """Ask now, whatever was asked a moment ago (before writing)."""
        self.checked = 0.0
        return self()
