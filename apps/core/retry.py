"""Calling a flaky public API (arXiv, bioRxiv) through the SSRF guard: which
failures are worth another try, and the loop that tries again with a doubling
wait. Both paper clients use it; each keeps its own idea of a usable answer."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar

from apps.core.errors import JarvisError
from apps.core.fetch import FetchError, FetchRefused

logger = logging.getLogger(__name__)

T = TypeVar("T")


class Transient(Exception):
    """One attempt failed in a way worth trying again (no answer, 5xx, 429, an
    answer that could not be read)."""


def classify(exc: FetchError, *, api: str, down: type[JarvisError]) -> Exception:
    """The exception to raise for a failed fetch of `api`: Transient when trying
    again may help, else `down` with a message a person can act on."""
    if isinstance(exc, FetchRefused):
        return down(f"the {api} address was refused: {exc}")
    if exc.status is None or exc.status >= 500 or exc.status == 429:
        return Transient(str(exc))
    return down(f"the {api} refused the request: {exc}")


def with_retries(
    attempt: Callable[[int, float], tuple[T | None, str]],
    *,
    attempts: int,
    first_backoff: float,
    api: str,
) -> tuple[T | None, str]:
    """Call `attempt(number, backoff)` until it returns a result with no cause,
    or `attempts` run out. `backoff` is the wait before this try (0 for the
    first, then `first_backoff`, doubling). A Transient raised by `attempt` is
    a cause like any other. Returns the last result and the last cause."""
    result: T | None = None
    cause = ""
    for number in range(1, attempts + 1):
        backoff = first_backoff * 2 ** (number - 2) if number > 1 else 0.0
        try:
            result, cause = attempt(number, backoff)
        except Transient as exc:
            result, cause = None, str(exc)
        if not cause:
            return result, ""
        if number < attempts:
            logger.info("%s: %s (attempt %d of %d), retrying", api, cause, number, attempts)
    return result, cause
