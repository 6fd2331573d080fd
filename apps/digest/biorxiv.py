"""bioRxiv: recent preprints from the details API, by category or by keyword.

`{JARVIS_BIORXIV_API_URL}/details/{server}/{from}/{to}/{cursor}` answers JSON:
a `messages` list whose first entry carries `status`, `cursor`, `count` and
`total`, and a `collection` of records (doi, title, authors "A; B", date,
version, category, abstract). Pages are walked by moving the cursor on by the
number of records the API says it sent. A category filters server-side (`?category=`);
keywords have no server-side filter, so one window is walked and matched
case-insensitively against title and abstract here.

Every request goes through the SSRF-guarded fetcher. A 5xx, a 429, a timeout,
a dropped connection, an answer that is not the expected JSON, or an empty
page the API says is not the end is retried (three attempts, with backoff);
after that the fetch fails with BiorxivDown naming the cause. The answer is
untrusted: fields are type-checked, and the links people see are built from
the DOI, never copied from the answer.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date
from typing import Any
from urllib.parse import quote, urlencode

from django.conf import settings

from apps.core.errors import JarvisError
from apps.core.fetch import FetchError, fetch
from apps.core.retry import Transient, classify, with_retries

logger = logging.getLogger(__name__)

SERVER = "biorxiv"
ATTEMPTS = 3
# Seconds before the first retry; doubles for each later one. Tests set it near 0.
RETRY_BACKOFF_SECONDS = 2.0
API_TIMEOUT_SECONDS = 30.0
API_MAX_BYTES = 20 * 1024 * 1024
# A week of bioRxiv is a few thousand records (about 100 a page); this bounds a
# keyword scan against an API that never says it is done.
MAX_PAGES = 100
ACCEPT = ("application/json", "text/json", "text/plain")
DOI_URL = "https://doi.org"


class BiorxivDown(JarvisError):
    """The bioRxiv API kept failing or answered something unusable."""


@dataclass
class Preprint:
    doi: str
    title: str
    authors: list[str]
    abstract: str
    posted: date | None
    category: str
    version: int
    matched: list[str] = field(default_factory=list)  # keywords that found it

    @property
    def link(self) -> str:
        return doi_link(self.doi)


def doi_link(doi: str) -> str:
    # Quoted: a DOI may hold characters that mean something in a URL or in Markdown.
    return f"{DOI_URL}/{quote(doi, safe='/:;._-')}"


@dataclass
class _Page:
    records: list[Preprint]
    raw: int  # records in the answer, malformed ones included
    count: int  # how far the cursor moves: the API's own count when it gives one
    total: int | None
    no_posts: bool


def api_category(category: str) -> str:
    return category.strip().lower().replace(" ", "_")


def _same_category(record: str, wanted: str) -> bool:
    return api_category(record) == api_category(wanted)


def _url(start: date, end: date, cursor: int, category: str = "") -> str:
    base = str(settings.BIORXIV_API_URL).rstrip("/")
    url = f"{base}/details/{SERVER}/{start.isoformat()}/{end.isoformat()}/{cursor}"
    if category:
        url += "?" + urlencode({"category": api_category(category)})
    return url


def _get(url: str, *, backoff: float) -> bytes:
    if backoff > 0:
        time.sleep(backoff)
    try:
        return fetch(url, accept=ACCEPT, timeout=API_TIMEOUT_SECONDS, max_bytes=API_MAX_BYTES).body
    except FetchError as exc:
        raise classify(exc, api="bioRxiv API", down=BiorxivDown) from exc


def _number(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def _text(value: Any) -> str:
    return " ".join(value.split()) if isinstance(value, str) else ""


def _record(raw: Any) -> Preprint | None:
    if not isinstance(raw, dict):
        return None
    doi, title = _text(raw.get("doi")), _text(raw.get("title"))
    if not doi.startswith("10.") or not title:
        return None
    posted = None
    try:
        posted = date.fromisoformat(_text(raw.get("date")))
    except ValueError:
        posted = None
    authors = [a.strip() for a in _text(raw.get("authors")).split(";") if a.strip()]
    return Preprint(
        doi=doi,
        title=title,
        authors=authors,
        abstract=_text(raw.get("abstract")),
        posted=posted,
        category=_text(raw.get("category")).lower(),
        version=_number(raw.get("version")) or 1,
    )


def _parse(body: bytes) -> _Page:
    try:
        data = json.loads(body)
    except ValueError as exc:
        raise Transient("an answer that is not JSON") from exc
    if not isinstance(data, dict):
        raise Transient("an answer of the wrong shape")
    messages, collection = data.get("messages"), data.get("collection")
    if not isinstance(messages, list) or not messages or not isinstance(messages[0], dict):
        raise Transient("an answer without its status message")
    if collection is None:
        collection = []
    if not isinstance(collection, list):
        raise Transient("an answer whose collection is not a list")
    status = _text(messages[0].get("status")).lower()
    records = []
    for position, raw in enumerate(collection):
        record = _record(raw)
        if record is None:
            logger.warning("bioRxiv API: skipped malformed record %d", position)
            continue
        records.append(record)
    count = _number(messages[0].get("count"))
    return _Page(
        records=records,
        raw=len(collection),
        count=count if count else len(collection),
        total=_number(messages[0].get("total")),
        no_posts=status.startswith("no posts"),
    )


def _page(start: date, end: date, cursor: int, category: str = "") -> _Page:
    """One page, retried. An empty page is only believed when the API says
    there are no posts or that the cursor is past the end."""
    url = _url(start, end, cursor, category)

    def attempt(number: int, backoff: float) -> tuple[_Page | None, str]:
        page = _parse(_get(url, backoff=backoff))
        if page.raw > 0 or (page.total is not None and page.total <= cursor):
            return page, ""
        if page.no_posts and cursor == 0 and number == ATTEMPTS:
            return page, ""  # asked three times: the week really is empty
        return page, "an empty page"

    page, cause = with_retries(
        attempt, attempts=ATTEMPTS, first_backoff=RETRY_BACKOFF_SECONDS, api="bioRxiv API"
    )
    if not cause:
        return page
    where = f"the {category} listing" if category else "the listing"
    raise BiorxivDown(
        f"bioRxiv is not answering {where}: {cause} (tried {ATTEMPTS} times); try again later"
    )


def _walk(start: date, end: date, category: str = "") -> Iterator[Preprint]:
    """Every record of the window (and category), page by page, newest version
    of each DOI kept by the caller."""
    cursor = 0
    for _ in range(MAX_PAGES):
        page = _page(start, end, cursor, category)
        yield from page.records
        if page.raw == 0:
            return
        cursor += page.count
        if page.total is not None and cursor >= page.total:
            return
    logger.warning("bioRxiv API: stopped after %d pages of %s", MAX_PAGES, category or "all")


def _keep_latest(found: dict[str, Preprint], record: Preprint) -> bool:
    """Add `record` unless a later version of the same DOI is there; True when new."""
    key = record.doi.lower()
    current = found.get(key)
    if current is None:
        found[key] = record
        return True
    if record.version > current.version:
        record.matched = current.matched
        found[key] = record
    return False


def fetch_category(category: str, *, start: date, end: date, limit: int) -> list[Preprint]:
    """Up to `limit` preprints posted in `category` between `start` and `end`
    (inclusive), one per DOI. Raises BiorxivDown."""
    found: dict[str, Preprint] = {}
    for record in _walk(start, end, category):
        # The API filters by category; checked here too, so a server that
        # ignores the parameter cannot flood the digest with everything.
        if not _same_category(record.category, category):
            continue
        if _keep_latest(found, record) and len(found) >= limit:
            break
    return list(found.values())[:limit]


def fetch_keywords(keywords: list[tuple[str, int]], *, start: date, end: date) -> list[Preprint]:
    """Preprints of the window whose title or abstract mentions a keyword
    (case-insensitive), at most each keyword's limit per keyword, one per DOI
    (a preprint found by two keywords lists both in `matched`). Raises BiorxivDown."""
    if not keywords:
        return []
    wanted = [(word, word.casefold(), limit) for word, limit in keywords]
    counts = {word: 0 for word, _, _ in wanted}
    found: dict[str, Preprint] = {}
    for record in _walk(start, end):
        haystack = f"{record.title} {record.abstract}".casefold()
        hits = [w for w, folded, limit in wanted if folded in haystack and counts[w] < limit]
        if not hits:
            continue
        key = record.doi.lower()
        existing = found.get(key)
        if existing is not None:
            fresh = [w for w in hits if w not in existing.matched]
            existing.matched.extend(fresh)
            if record.version > existing.version:
                record.matched = existing.matched
                found[key] = record
            for word in fresh:
                counts[word] += 1
        else:
            record.matched = hits
            found[key] = record
            for word in hits:
                counts[word] += 1
        if all(counts[w] >= limit for w, _, limit in wanted):
            break
    return list(found.values())
