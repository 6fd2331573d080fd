"""arXiv: paper identifiers, metadata from the Atom API, category listings, PDFs.

Every request goes through apps.core.fetch (the SSRF guard). The API is
flaky in known ways, so calls retry the way the `arxiv` client does: an HTTP
200 with an empty feed, a 5xx, a 429, a timeout or a dropped connection is
tried again (three attempts in all, with exponential backoff on top of the
courtesy delay arXiv asks clients to keep between calls). The feed is
untrusted: it is parsed with defusedxml, and the URLs a person sees are built
from the parsed identifier, never copied from the feed.
"""

from __future__ import annotations

import logging
import re
import threading
import time
import xml.etree.ElementTree as StdET
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from urllib.parse import urlencode, urlsplit
from xml.etree.ElementTree import Element

from defusedxml import DefusedXmlException
from defusedxml import ElementTree as SafeET
from django.conf import settings

from apps.core.errors import JarvisError
from apps.core.fetch import FetchError, fetch
from apps.core.retry import Transient, classify, with_retries

logger = logging.getLogger(__name__)

ATTEMPTS = 3
# Seconds before the first retry; it doubles for each later one. Tests set it near 0.
RETRY_BACKOFF_SECONDS = 2.0
# arXiv answers a listing of a few hundred entries in well under this; a hung call should not
# hold the worker (the fetch guard's own default is tuned for web pages).
API_TIMEOUT_SECONDS = 30.0
PDF_MAX_BYTES = 100 * 1024 * 1024
# The API refuses more than this per call.
MAX_RESULTS_PER_CALL = 2000

FEED_TYPES = ("application/atom+xml", "application/xml", "text/xml")
PUBLIC_ABS_URL = "https://arxiv.org/abs"
PUBLIC_PDF_URL = "https://arxiv.org/pdf"

ATOM = "{http://www.w3.org/2005/Atom}"
ARXIV = "{http://arxiv.org/schemas/atom}"
OPENSEARCH = "{http://a9.com/-/spec/opensearch/1.1/}"


class PaperNotFound(JarvisError):
    """arXiv has no paper with that identifier (the message is shown to people)."""


class PaperSourceDown(JarvisError):
    """The arXiv API kept failing (or refused the request); the message names the cause."""


@dataclass(frozen=True)
class ArxivId:
    id: str
    version: int | None = None

    @property
    def canonical_url(self) -> str:
        return f"{PUBLIC_ABS_URL}/{self.id}"

    @property
    def versioned(self) -> str:
        return f"{self.id}v{self.version}" if self.version else self.id

    def __str__(self) -> str:
        return self.versioned


@dataclass
class PaperMeta:
    arxiv_id: ArxivId
    title: str
    authors: list[str]
    abstract: str
    published: date | None
    updated: date | None
    doi: str
    primary_category: str
    categories: list[str]
    abs_url: str
    pdf_url: str


# --- Identifiers

# New style (April 2007 on): YYMM.NNNN until the end of 2014, YYMM.NNNNN since.
_NEW_ID = re.compile(r"(?P<yymm>\d{4})\.(?P<num>\d{4,5})(?:v(?P<version>[1-9]\d*))?")
# Old style: archive[.SUBJECT-CLASS]/YYMMNNN. The subject class is not part of the identifier
# (arxiv.org/abs/math.GT/0309136 is math/0309136), so it is dropped.
_OLD_ID = re.compile(
    r"(?P<archive>[a-z]+(?:-[a-z]+)?)(?:\.[a-z]+(?:-[a-z]+)?)?/(?P<num>\d{7})"
    r"(?:v(?P<version>[1-9]\d*))?",
    re.IGNORECASE,
)
_PREFIX = re.compile(r"arxiv:", re.IGNORECASE)
_ARXIV_DOI = re.compile(r"10\.48550/arxiv\.(?P<rest>.+)", re.IGNORECASE)
_HOSTS = {"arxiv.org", "www.arxiv.org", "export.arxiv.org"}
_PATH = re.compile(r"/(?:abs|pdf|html)/(?P<rest>.+?)(?:\.pdf)?/?")
_CATEGORY = re.compile(r"[a-z]+(?:-[a-z]+)?(?:\.[A-Za-z]+(?:-[a-z]+)?)?")


def _bare_id(text: str) -> ArxivId | None:
    match = _NEW_ID.fullmatch(text)
    if match:
        yymm = int(match["yymm"])
        year, month = divmod(yymm, 100)
        if not 1 <= month <= 12 or yymm < 704:
            return None
        # Four digits belong to 2007-2014, five to 2015 on; anything else is a typo.
        if (len(match["num"]) == 5) != (year >= 15):
            return None
        version = match["version"]
        return ArxivId(f"{match['yymm']}.{match['num']}", int(version) if version else None)
    match = _OLD_ID.fullmatch(text)
    if match:
        version = match["version"]
        return ArxivId(
            f"{match['archive'].lower()}/{match['num']}", int(version) if version else None
        )
    return None


def parse_arxiv_id(text: str) -> ArxivId | None:
    """The arXiv identifier in `text` (a bare id, arXiv:id, an abs/pdf/html URL on
    arxiv.org, or arXiv's own DOI), or None when it is not one."""
    text = text.strip()
    if not text or any(ch.isspace() for ch in text):
        return None
    if _PREFIX.match(text):
        return _bare_id(text[len("arxiv:") :])
    bare = _bare_id(text)
    if bare is not None:
        return bare
    doi = text
    for prefix in ("https://doi.org/", "http://doi.org/", "https://dx.doi.org/", "doi:"):
        if doi.lower().startswith(prefix):
            doi = doi[len(prefix) :]
            break
    match = _ARXIV_DOI.fullmatch(doi)
    if match:
        return _bare_id(match["rest"])
    return _from_url(text if "://" in text else f"https://{text}")


def _from_url(text: str) -> ArxivId | None:
    try:
        parts = urlsplit(text)
        host = parts.hostname
        parts.port  # noqa: B018 - raises on a malformed port
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or parts.username or parts.password:
        return None
    if host not in _HOSTS:
        return None
    match = _PATH.fullmatch(parts.path)
    return _bare_id(match["rest"]) if match else None


# --- The Atom API


_turn_lock = threading.Lock()
_last_call_ended: float | None = None


def _api_get(url: str, *, backoff: float) -> bytes:
    """One API call, at least ARXIV_DELAY_SECONDS (plus `backoff`) after the previous
    one ended. Calls are serialised: arXiv asks for one connection at a time."""
    global _last_call_ended
    with _turn_lock:
        wait = backoff
        if _last_call_ended is not None:
            since = time.monotonic() - _last_call_ended
            wait += max(0.0, float(settings.ARXIV_DELAY_SECONDS) - since)
        if wait > 0:
            time.sleep(wait)
        try:
            result = fetch(url, accept=FEED_TYPES, timeout=API_TIMEOUT_SECONDS)
        except FetchError as exc:
            raise classify(exc, api="arXiv API", down=PaperSourceDown) from exc
        finally:
            _last_call_ended = time.monotonic()
    return result.body


@dataclass
class _Feed:
    entries: list[PaperMeta]
    errors: list[str]  # the API's own error entries ("incorrect id format for …")
    raw_entries: int
    total: int | None


def _query(
    params: dict[str, str | int], *, complete: Callable[[_Feed], bool]
) -> tuple[_Feed | None, str]:
    """Calls the API until `complete(feed)` or ATTEMPTS run out. Returns the last
    feed (None when no attempt produced one) and the cause of the last failure."""
    url = f"{str(settings.ARXIV_API_URL).rstrip('/')}/query?{urlencode(params)}"

    def attempt(number: int, backoff: float) -> tuple[_Feed | None, str]:
        feed = _parse_feed(_api_get(url, backoff=backoff))
        return feed, "" if complete(feed) else "an empty answer"

    return with_retries(
        attempt, attempts=ATTEMPTS, first_backoff=RETRY_BACKOFF_SECONDS, api="arXiv API"
    )


def _parse_feed(body: bytes) -> _Feed:
    try:
        root = SafeET.fromstring(body)
    except (StdET.ParseError, DefusedXmlException) as exc:
        logger.info("arXiv API: unreadable feed: %s", exc)
        raise Transient("an unreadable feed") from exc
    if root.tag != f"{ATOM}feed":
        raise Transient("an answer that is not an Atom feed")
    total = None
    total_text = (root.findtext(f"{OPENSEARCH}totalResults") or "").strip()
    if total_text.isdigit():
        total = int(total_text)
    entries, errors = [], []
    raw = root.findall(f"{ATOM}entry")
    for position, element in enumerate(raw):
        entry_id = _text(element, f"{ATOM}id")
        title = _text(element, f"{ATOM}title")
        if "/api/errors" in entry_id or (title == "Error" and parse_arxiv_id(entry_id) is None):
            errors.append(_text(element, f"{ATOM}summary") or entry_id or "error")
            continue
        meta = _entry_meta(element)
        if meta is None:
            logger.warning(
                "arXiv API: skipped malformed entry %d (id %r, title %r)",
                position,
                entry_id[:200],
                title[:200],
            )
            continue
        entries.append(meta)
    return _Feed(entries=entries, errors=errors, raw_entries=len(raw), total=total)


def _text(element: Element, tag: str) -> str:
    return " ".join((element.findtext(tag) or "").split())


def _entry_meta(element: Element) -> PaperMeta | None:
    arxiv_id = parse_arxiv_id(element.findtext(f"{ATOM}id") or "")
    title = _text(element, f"{ATOM}title")
    if arxiv_id is None or not title:
        return None
    authors = [
        name
        for author in element.findall(f"{ATOM}author")
        if (name := _text(author, f"{ATOM}name"))
    ]
    categories: list[str] = []
    for category in element.findall(f"{ATOM}category"):
        term = (category.get("term") or "").strip()
        if term and term not in categories:
            categories.append(term)
    primary_element = element.find(f"{ARXIV}primary_category")
    primary = (primary_element.get("term") or "").strip() if primary_element is not None else ""
    if not primary and categories:
        primary = categories[0]
    if primary and primary not in categories:
        categories.insert(0, primary)
    return PaperMeta(
        arxiv_id=arxiv_id,
        title=title,
        authors=authors,
        abstract=_text(element, f"{ATOM}summary"),
        published=_date(element.findtext(f"{ATOM}published")),
        updated=_date(element.findtext(f"{ATOM}updated")),
        doi=_text(element, f"{ARXIV}doi"),
        primary_category=primary,
        categories=categories,
        abs_url=arxiv_id.canonical_url,
        pdf_url=f"{PUBLIC_PDF_URL}/{arxiv_id.versioned}",
    )


def _date(text: str | None) -> date | None:
    if not text or not text.strip():
        return None
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        return None
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.date()


def fetch_metadata(arxiv_id: ArxivId) -> PaperMeta:
    """The paper's metadata (its latest version unless `arxiv_id` names one).
    Raises PaperNotFound or PaperSourceDown."""

    def found(feed: _Feed) -> bool:
        return bool(feed.errors) or any(meta.arxiv_id.id == arxiv_id.id for meta in feed.entries)

    feed, cause = _query({"id_list": arxiv_id.versioned, "max_results": 1}, complete=found)
    if feed is None:
        raise PaperSourceDown(
            f"arXiv is not answering: {cause} (tried {ATTEMPTS} times); try again later"
        )
    for meta in feed.entries:
        if meta.arxiv_id.id == arxiv_id.id:
            if meta.arxiv_id.version is None and arxiv_id.version is not None:
                meta.arxiv_id = arxiv_id
                meta.pdf_url = f"{PUBLIC_PDF_URL}/{arxiv_id.versioned}"
            return meta
    if feed.errors:
        logger.info("arXiv API error for %s: %s", arxiv_id, feed.errors[0])
        raise PaperNotFound(f"arXiv has no paper {arxiv_id}")
    raise PaperNotFound(f"arXiv has no paper {arxiv_id} (checked {ATTEMPTS} times)")


def search_category(category: str, *, max_results: int, start: int = 0) -> list[PaperMeta]:
    """Papers listed in `category` (cross-lists included), newest submission first,
    from offset `start`. Raises ValueError for a malformed category or range,
    PaperSourceDown when the API keeps failing or keeps sending empty pages."""
    category = category.strip()
    if not _CATEGORY.fullmatch(category):
        raise ValueError(f"{category!r} is not an arXiv category (e.g. cs.LG, hep-th)")
    if not 0 <= max_results <= MAX_RESULTS_PER_CALL or start < 0:
        raise ValueError(f"max_results must be 0..{MAX_RESULTS_PER_CALL} and start >= 0")
    if max_results == 0:
        return []

    def complete(feed: _Feed) -> bool:
        # An empty page is only believable when the feed says there is nothing from `start` on.
        return feed.raw_entries > 0 or (feed.total is not None and feed.total <= start)

    params = {
        "search_query": f"cat:{category}",
        "sortBy": "submittedDate",
        "sortOrder": "descending",
        "start": start,
        "max_results": max_results,
    }
    feed, cause = _query(params, complete=complete)
    if feed is None or not complete(feed):
        raise PaperSourceDown(
            f"arXiv is not answering the {category} listing: {cause} "
            f"(tried {ATTEMPTS} times); try again later"
        )
    entries = feed.entries[:max_results]
    entries.sort(key=lambda meta: meta.published or date.min, reverse=True)
    return entries


# --- PDFs


def pdf_fetch_url(meta: PaperMeta) -> str:
    return f"{str(settings.ARXIV_PDF_URL).rstrip('/')}/{meta.arxiv_id.versioned}"


def download_pdf(meta: PaperMeta) -> bytes:
    """The paper's PDF (the version in `meta`). Raises FetchError (wrong content
    type, too large, HTTP error, unreachable) or FetchRefused."""
    result = fetch(pdf_fetch_url(meta), accept=("application/pdf",), max_bytes=PDF_MAX_BYTES)
    if not result.body.startswith(b"%PDF-"):
        raise FetchError("arXiv sent something that is not a PDF")
    return result.body
