"""Parsing in a child process with limits: the only way Jarvis parses a file.

Two lanes. Every file first gets the **quick** lane: JARVIS_PARSE_QUICK_SECONDS
of wall-clock time. A file that needs longer (or makes more than
JARVIS_PARSE_QUICK_MAX_CHUNKS passages, which take long to embed) raises
ParseTooSlow and is handed to the **long** lane, which runs one file at a time
with the full limits (JARVIS_PARSE_TIMEOUT_SECONDS / _CPU_SECONDS /
_MEMORY_MB). So a hostile or merely huge file holds at most one worker thread
for long, and ordinary notes never queue behind it.

Small notes are parsed in batches (one child for many files): forking costs
more than parsing a note. A batch that fails as a whole is retried file by
file, so one bad file never takes its neighbours down with it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

from django.conf import settings

from apps.core.sandbox import ChildLimits, ChildOutcome, run_in_child
from apps.core.sandbox.codec import DecodeError, from_jsonable
from apps.library.ingest.parsing.limits import ParseLimits
from apps.library.ingest.parsing.types import ParsedDocument, UnreadableDocument

QUICK, LONG = "quick", "long"
# Notes this small are batched; a batch holds at most this many bytes and files.
BATCHABLE_KINDS = ("note", "text")
BATCHABLE_BYTES = 256 * 1024
BATCH_BYTES = 2 * 1024 * 1024
BATCH_FILES = 32


class ParseFailed(UnreadableDocument):
    """The document fails with this reason (a cap, a limit, a refusal)."""


class ParserCrashed(ParseFailed):
    """The parser process died on this file (a crash, not a limit)."""


class ParseTooSlow(Exception):
    """Over the quick lane's time or passages: the file belongs in the long lane."""


class ParseCancelled(Exception):
    """The person cancelled (or a newer request replaced) this parse."""


@dataclass(frozen=True)
class ParseItem:
    data: bytes
    kind: str
    filename: str
    url: str = ""

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


def child_limits(lane: str) -> ChildLimits:
    wall = settings.PARSE_QUICK_SECONDS if lane == QUICK else settings.PARSE_TIMEOUT_SECONDS
    return ChildLimits(
        wall_seconds=wall,
        cpu_seconds=settings.PARSE_CPU_SECONDS,
        memory_mb=settings.PARSE_MEMORY_MB,
    )


def parse_one(
    item: ParseItem, *, lane: str = LONG, cancelled: Callable[[], bool] | None = None
) -> ParsedDocument:
    """Parse one file in a child. Raises ParseFailed (the document fails with
    its reason), ParseTooSlow (quick lane only), or ParseCancelled."""
    (result,) = parse_many([item], lane=lane, cancelled=cancelled)
    if isinstance(result, Exception):
        raise result
    return result


def parse_many(
    items: Sequence[ParseItem], *, lane: str, cancelled: Callable[[], bool] | None = None
) -> list[Result]:
    """Parse files in one child; each result is a ParsedDocument or the
    exception parse_one would raise for it."""
    if not items:
        return []
    outcome = run_in_child(
        "library.parse",
        params={
            "items": [{"kind": i.kind, "filename": i.filename, "url": i.url} for i in items],
            "limits": asdict(parse_limits()),
        },
        blobs=[item.data for item in items],
        limits=child_limits(lane),
        cancelled=cancelled,
    )
    if outcome.ok:
        return [_decoded(result, lane) for result in _results(outcome, len(items))]
    if outcome.failure == "cancelled":
        return [ParseCancelled() for _ in items]
    if len(items) > 1:
        return [parse_many([item], lane=lane, cancelled=cancelled)[0] for item in items]
    return [_failure(outcome, lane)]


def _results(outcome: ChildOutcome, count: int) -> list:
    results = outcome.value.get("results") if outcome.value else None
    if not isinstance(results, list) or len(results) != count:
        return [{"garbled": True}] * count
    return results


def _decoded(result: dict, lane: str) -> Result:
    if not isinstance(result, dict):
        return ParserCrashed("the parser returned something unreadable")
    if "refused" in result:
        return ParseFailed(str(result["refused"])[:1000])
    try:
        parsed = from_jsonable(ParsedDocument, result.get("parsed"))
    except (DecodeError, TypeError, ValueError):
        return ParserCrashed("the parser returned something unreadable")
    if lane == QUICK and len(parsed.chunks) > settings.PARSE_QUICK_MAX_CHUNKS:
        return ParseTooSlow(f"{len(parsed.chunks)} passages")
    return parsed


def _failure(outcome: ChildOutcome, lane: str) -> Exception:
    failure = outcome.failure
    if failure == "timeout":
        if lane == QUICK:
            return ParseTooSlow(f"over {settings.PARSE_QUICK_SECONDS} s")
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
