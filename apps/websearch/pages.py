"""Reading the top result pages: each fetched through the SSRF guard
(apps.core.fetch: public addresses only, every redirect re-checked, a size
cap while streaming, time limits), its main content extracted in a sandbox
child (sandboxed.py). The pages are fetched side by side, so the slowest one
bounds the wait, not their sum."""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime

from apps.core.fetch import FetchError, FetchRefused, fetch
from apps.core.sandbox import ChildLimits, SandboxUnavailable, run_in_child

logger = logging.getLogger(__name__)

PAGE_CHARS = 1500  # what the model gets of each page: enough to answer, short on a CPU
EXTRACT_LIMITS = ChildLimits(wall_seconds=20, cpu_seconds=15, memory_mb=768)
ACCEPT = ("text/html", "application/xhtml+xml", "text/plain")


@dataclass
class PageRead:
    url: str
    text: str = ""  # the main content, cut to PAGE_CHARS; "" when not read
    problem: str = ""  # why it was not read ("larger than 1 MB", "timed out after 8 s")
    refused: bool = False  # the SSRF guard refused the address: the result is left out
    fetched_at: datetime | None = None


def pages_read(urls: list[str], *, max_bytes: int, timeout: float) -> list[PageRead]:
    """One PageRead per URL, in order. Never raises for what a page did."""
    if not urls:
        return []
    with ThreadPoolExecutor(max_workers=len(urls)) as pool:
        fetched = list(pool.map(lambda url: _fetch(url, max_bytes, timeout), urls))
    bodies = [(read, body) for read, body in fetched if body is not None]
    if bodies:
        _extract(bodies)
    return [read for read, _ in fetched]


def _fetch(url: str, max_bytes: int, timeout: float) -> tuple[PageRead, bytes | None]:
    read = PageRead(url=url)
    try:
        result = fetch(url, accept=ACCEPT, max_bytes=max_bytes, timeout=timeout)
    except FetchRefused as exc:
        read.refused, read.problem = True, str(exc)
        return read, None
    except FetchError as exc:
        read.problem = str(exc)
        return read, None
    read.fetched_at = result.fetched_at
    if result.content_type == "text/plain":
        read.text = _decoded(result.body, result.charset)[:PAGE_CHARS].strip()
        return read, None
    return read, result.body


def _decoded(body: bytes, charset: str | None) -> str:
    try:
        return body.decode(charset or "utf-8", errors="replace")
    except LookupError:  # a charset the server made up
        return body.decode("utf-8", errors="replace")


def _extract(bodies: list[tuple[PageRead, bytes]]) -> None:
    try:
        outcome = run_in_child(
            "websearch.extract",
            params={"urls": [read.url for read, _ in bodies], "max_chars": PAGE_CHARS},
            blobs=[body for _, body in bodies],
            limits=EXTRACT_LIMITS,
            max_result_bytes=1024 * 1024,
        )
    except SandboxUnavailable:
        logger.exception("web search: the sandbox could not be started")
        outcome = None
    if outcome is None or not outcome.ok:
        why = outcome.failure if outcome is not None else "unavailable"
        logger.warning("web search: reading %d pages failed (%s)", len(bodies), why)
        for read, _ in bodies:
            read.problem = "its content could not be read"
        return
    for (read, _), text in zip(bodies, outcome.value["texts"], strict=True):
        read.text = text
        if not text:
            read.problem = "no readable text on the page"
