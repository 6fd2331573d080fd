"""A fake arXiv: a real HTTP server on 127.0.0.1 that speaks the Atom API and serves PDFs.

    with FakeArxiv() as fake:
        fake.configure(settings)          # points ARXIV_API_URL / ARXIV_PDF_URL here, delay 0
        fake.empty_next(2)                # the next two API answers are empty 200 feeds
        fetch_metadata(ArxivId("2401.12345"))
        assert len(fake.api_requests) == 3

It holds a catalogue of papers (DEFAULT_PAPERS unless given others; `add` more), answers
`/api/query?id_list=…` and `/api/query?search_query=cat:…&sortBy=submittedDate&sortOrder=…
&start=&max_results=` the way export.arxiv.org does (wrapped titles and abstracts, an
empty feed for an unknown id), and `/pdf/<id>[v<n>]` with a small PDF (PyMuPDF) whose first
page carries the title. Faults are queued per kind of request ("api" or "pdf") and each
one is used up by one request: empty 200, an HTTP status, an extra malformed entry, a body
that is not XML, a slow answer, a dropped connection, a wrong content type. Every request
is recorded (`requests`, `api_requests`, `pdf_requests`).
"""

from __future__ import annotations

import re
import textwrap
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.fakes.serving import QuietHandler, ServedFake

ATOM_NS = "http://www.w3.org/2005/Atom"
ARXIV_NS = "http://arxiv.org/schemas/atom"
OPENSEARCH_NS = "http://a9.com/-/spec/opensearch/1.1/"
FEED_TYPE = "application/atom+xml; charset=UTF-8"

ET.register_namespace("", ATOM_NS)
ET.register_namespace("arxiv", ARXIV_NS)
ET.register_namespace("opensearch", OPENSEARCH_NS)

_ID_WITH_VERSION = re.compile(r"(?P<id>.+?)(?:v(?P<version>\d+))?")


@dataclass
class FakePaper:
    id: str
    title: str
    authors: list[str]
    abstract: str
    published: datetime
    categories: list[str]  # the first is the primary category
    version: int = 1  # the latest version; any earlier one can be asked for too
    updated: datetime | None = None
    doi: str = ""
    comment: str = ""
    pages: list[str] = field(default_factory=list)  # body text after the title page
    _pdf: bytes | None = field(default=None, repr=False)

    @property
    def pdf(self) -> bytes:
        if self._pdf is None:
            self._pdf = make_pdf(self.title, self.authors, self.pages or _filler(self))
        return self._pdf


def _filler(paper: FakePaper) -> list[str]:
    return [
        f"1 Introduction\n\n{paper.abstract}\n\nWe study this question in detail.",
        "2 Method\n\nThe method has three steps, each described below with care.",
    ]


def make_pdf(title: str, authors: list[str], pages: list[str]) -> bytes:
    """A small real PDF: the title (and authors) on page 1, one page per item of `pages`."""
    import pymupdf

    doc = pymupdf.open()
    first = doc.new_page()
    first.insert_textbox(pymupdf.Rect(72, 72, 540, 200), title, fontsize=18)
    first.insert_textbox(pymupdf.Rect(72, 210, 540, 260), ", ".join(authors), fontsize=11)
    for text in pages:
        page = doc.new_page()
        page.insert_textbox(pymupdf.Rect(72, 72, 540, 760), text, fontsize=11)
    data = doc.tobytes()
    doc.close()
    return data


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


DEFAULT_PAPERS = [
    FakePaper(
        id="2401.12345",
        version=2,
        title="Sparse Attention for Very Long Household Documents: A Study of Retrieval",
        authors=["Ada Lovelace", "Alan Turing", "Grace Hopper"],
        abstract=(
            "We show that sparse attention retrieves facts from long household documents "
            "as well as dense attention does, at a tenth of the cost. Experiments on "
            "receipts, manuals and letters confirm it."
        ),
        published=_at("2024-01-22T18:59:59"),
        updated=_at("2024-02-05T10:00:00"),
        categories=["cs.LG", "cs.CL"],
        doi="10.1234/jarvis.2024.001",
        comment="12 pages, 3 figures",
    ),
    FakePaper(
        id="2401.00007",
        title="Small Language Models Read Receipts",
        authors=["Katherine Johnson"],
        abstract="Receipts are short; small models read them well.",
        published=_at("2024-01-02T09:00:00"),
        categories=["cs.CL"],
    ),
    FakePaper(
        id="2312.04567",
        title="Embedding Drift in Personal Archives",
        authors=["Barbara Liskov", "Edsger Dijkstra"],
        abstract="Embeddings of old notes drift as models change; we measure how much.",
        published=_at("2023-12-08T12:30:00"),
        categories=["cs.IR", "cs.LG"],
    ),
    FakePaper(
        id="2402.01001",
        title="Gradient Descent on Grocery Lists",
        authors=["John von Neumann"],
        abstract="A light-hearted optimisation of weekly shopping.",
        published=_at("2024-02-01T08:00:00"),
        categories=["cs.LG"],
    ),
    FakePaper(
        id="hep-th/9901001",
        version=3,
        title="Strings on a Household Budget",
        authors=["Edward Witten"],
        abstract="An old-style identifier for tests of the pre-2007 scheme.",
        published=_at("1999-01-04T00:00:00"),
        updated=_at("1999-06-01T00:00:00"),
        categories=["hep-th"],
    ),
]


@dataclass
class Fault:
    kind: str  # empty | status | malformed | garbage | slow | drop | content_type
    target: str = "api"  # api | pdf
    times: int | None = 1  # None: every matching request from now on
    status: int = 503
    seconds: float = 1.0
    content_type: str = "text/html; charset=utf-8"


@dataclass
class RecordedRequest:
    path: str
    query: dict[str, list[str]]
    kind: str  # api | pdf | other
    at: float

    def param(self, name: str) -> str:
        return self.query.get(name, [""])[0]


class FakeArxiv(ServedFake):
    def __init__(self, papers: list[FakePaper] | None = None) -> None:
        source = DEFAULT_PAPERS if papers is None else papers
        self.papers: dict[str, FakePaper] = {}
        for paper in source:
            # Copies, so a test that edits its catalogue leaves the defaults alone.
            self.add(replace(paper, authors=list(paper.authors), categories=list(paper.categories)))
        # How an unknown but well-formed id is answered: "empty" (today's API) or
        # "error" (an entry whose id is an api/errors URL and whose title is "Error").
        self.unknown_ids = "empty"
        self.requests: list[RecordedRequest] = []
        self._faults: list[Fault] = []
        self._lock = threading.Lock()

    @property
    def api_url(self) -> str:
        return f"{self.base_url}/api"

    @property
    def pdf_url(self) -> str:
        return f"{self.base_url}/pdf"

    def configure(self, settings) -> None:
        """Points the arXiv settings (pytest-django's `settings` fixture) at this fake."""
        settings.ARXIV_API_URL = self.api_url
        settings.ARXIV_PDF_URL = self.pdf_url
        settings.ARXIV_DELAY_SECONDS = 0

    # --- catalogue

    def add(self, paper: FakePaper) -> FakePaper:
        self.papers[paper.id] = paper
        return paper

    def paper(self, arxiv_id: str) -> FakePaper:
        return self.papers[arxiv_id]

    # --- faults

    def queue(self, fault: Fault) -> None:
        with self._lock:
            self._faults.append(fault)

    def empty_next(self, times: int | None = 1) -> None:
        self.queue(Fault("empty", times=times))

    def fail_next(self, times: int | None = 1, *, status: int = 503, target: str = "api") -> None:
        self.queue(Fault("status", target=target, times=times, status=status))

    def malformed_next(self, times: int | None = 1) -> None:
        self.queue(Fault("malformed", times=times))

    def garbage_next(self, times: int | None = 1) -> None:
        self.queue(Fault("garbage", times=times))

    def slow_next(self, times: int | None = 1, *, seconds: float = 1.0, target="api") -> None:
        self.queue(Fault("slow", target=target, times=times, seconds=seconds))

    def drop_next(self, times: int | None = 1, *, target: str = "api") -> None:
        self.queue(Fault("drop", target=target, times=times))

    def wrong_type_next(
        self, times: int | None = 1, *, content_type="text/html; charset=utf-8", target="pdf"
    ) -> None:
        self.queue(Fault("content_type", target=target, times=times, content_type=content_type))

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()

    def _take_fault(self, kind: str) -> Fault | None:
        with self._lock:
            for fault in self._faults:
                if fault.target != kind:
                    continue
                if fault.times is not None:
                    fault.times -= 1
                    if fault.times <= 0:
                        self._faults.remove(fault)
                return fault
        return None

    # --- records

    @property
    def api_requests(self) -> list[RecordedRequest]:
        return [request for request in self.requests if request.kind == "api"]

    @property
    def pdf_requests(self) -> list[RecordedRequest]:
        return [request for request in self.requests if request.kind == "pdf"]

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    # --- answers

    def _lookup(self, requested: str) -> tuple[FakePaper, int] | None:
        match = _ID_WITH_VERSION.fullmatch(requested)
        if not match:
            return None
        paper = self.papers.get(match["id"])
        if paper is None:
            return None
        version = int(match["version"]) if match["version"] else paper.version
        if not 1 <= version <= paper.version:
            return None
        return paper, version

    def answer_query(self, query: dict[str, list[str]]) -> Answer:
        """What the API would answer to /api/query, before any fault."""
        start = int(query.get("start", ["0"])[0] or 0)
        max_results = int(query.get("max_results", ["10"])[0] or 10)
        if "id_list" in query:
            found, errors = [], []
            for requested in query["id_list"][0].split(","):
                hit = self._lookup(requested.strip())
                if hit is not None:
                    found.append(hit)
                elif self.unknown_ids == "error":
                    errors.append(requested.strip())
            return Answer(200, found[:max_results], len(found) + len(errors), 0, errors)
        search = query.get("search_query", [""])[0]
        if not search.startswith("cat:"):
            return Answer(400, [], 1, 0, [f"unsupported query {search}"])
        category = search.removeprefix("cat:")
        papers = [paper for paper in self.papers.values() if category in paper.categories]
        if query.get("sortBy", [""])[0] == "submittedDate":
            descending = query.get("sortOrder", ["descending"])[0] == "descending"
            papers.sort(key=lambda paper: paper.published, reverse=descending)
        page = [(paper, paper.version) for paper in papers[start : start + max_results]]
        return Answer(200, page, len(papers), start, [])


@dataclass
class Answer:
    status: int
    entries: list[tuple[FakePaper, int]]
    total: int
    start: int
    errors: list[str]

    def feed(self, *, entries: bool = True, malformed: bool = False) -> bytes:
        """The Atom feed; `entries=False` keeps the total but drops every entry (the
        empty-page glitch); `malformed` slips an entry without id or title in second place."""
        root = ET.Element(f"{{{ATOM_NS}}}feed")
        ET.SubElement(root, f"{{{ATOM_NS}}}title", type="html").text = "ArXiv Query"
        ET.SubElement(root, f"{{{ATOM_NS}}}id").text = "http://arxiv.org/api/fake"
        ET.SubElement(root, f"{{{ATOM_NS}}}updated").text = "2024-02-06T00:00:00-05:00"
        ET.SubElement(root, f"{{{OPENSEARCH_NS}}}totalResults").text = str(self.total)
        ET.SubElement(root, f"{{{OPENSEARCH_NS}}}startIndex").text = str(self.start)
        shown = self.entries if entries else []
        ET.SubElement(root, f"{{{OPENSEARCH_NS}}}itemsPerPage").text = str(len(shown))
        for position, (paper, version) in enumerate(shown):
            if malformed and position == 1:
                _malformed_entry(root)
            _entry(root, paper, version)
        if malformed and len(shown) < 2:
            _malformed_entry(root)
        for requested in self.errors if entries else []:
            entry = ET.SubElement(root, f"{{{ATOM_NS}}}entry")
            ET.SubElement(
                entry, f"{{{ATOM_NS}}}id"
            ).text = f"http://arxiv.org/api/errors#incorrect_id_format_for_{requested}"
            ET.SubElement(entry, f"{{{ATOM_NS}}}title").text = "Error"
            ET.SubElement(
                entry, f"{{{ATOM_NS}}}summary"
            ).text = f"incorrect id format for {requested}"
        return b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="utf-8")


def _wrapped(text: str, indent: str) -> str:
    """Text wrapped and indented the way the real feed does it."""
    return f"\n{indent}".join(textwrap.wrap(text, 60)) if text else ""


def _stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _entry(root: ET.Element, paper: FakePaper, version: int) -> None:
    atom = f"{{{ATOM_NS}}}"
    entry = ET.SubElement(root, f"{atom}entry")
    ET.SubElement(entry, f"{atom}id").text = f"http://arxiv.org/abs/{paper.id}v{version}"
    ET.SubElement(entry, f"{atom}updated").text = _stamp(paper.updated or paper.published)
    ET.SubElement(entry, f"{atom}published").text = _stamp(paper.published)
    ET.SubElement(entry, f"{atom}title").text = _wrapped(paper.title, "  ")
    ET.SubElement(entry, f"{atom}summary").text = f"  {_wrapped(paper.abstract, '')}\n"
    for name in paper.authors:
        author = ET.SubElement(entry, f"{atom}author")
        ET.SubElement(author, f"{atom}name").text = name
    if paper.doi:
        ET.SubElement(entry, f"{{{ARXIV_NS}}}doi").text = paper.doi
        ET.SubElement(
            entry, f"{atom}link", title="doi", href=f"http://dx.doi.org/{paper.doi}", rel="related"
        )
    if paper.comment:
        ET.SubElement(entry, f"{{{ARXIV_NS}}}comment").text = paper.comment
    ET.SubElement(
        entry,
        f"{atom}link",
        href=f"http://arxiv.org/abs/{paper.id}v{version}",
        rel="alternate",
        type="text/html",
    )
    ET.SubElement(
        entry,
        f"{atom}link",
        title="pdf",
        href=f"http://arxiv.org/pdf/{paper.id}v{version}",
        rel="related",
        type="application/pdf",
    )
    ET.SubElement(
        entry, f"{{{ARXIV_NS}}}primary_category", term=paper.categories[0], scheme=ARXIV_NS
    )
    for term in paper.categories:
        ET.SubElement(entry, f"{atom}category", term=term, scheme=ARXIV_NS)


def _malformed_entry(root: ET.Element) -> None:
    """An entry without id or title (what a truncated record from the API looks like)."""
    entry = ET.SubElement(root, f"{{{ATOM_NS}}}entry")
    ET.SubElement(entry, f"{{{ATOM_NS}}}summary").text = "A record that lost its id and title."
    author = ET.SubElement(entry, f"{{{ATOM_NS}}}author")
    ET.SubElement(author, f"{{{ATOM_NS}}}name").text = "Nobody"


class _Handler(QuietHandler):
    owner: FakeArxiv

    def do_GET(self) -> None:
        fake = self.owner
        parts = urlsplit(self.path)
        kind = (
            "api"
            if parts.path == "/api/query"
            else "pdf"
            if parts.path.startswith("/pdf/")
            else "other"
        )
        fake._record(RecordedRequest(parts.path, parse_qs(parts.query), kind, time.monotonic()))
        fault = fake._take_fault(kind) if kind != "other" else None
        if fault is not None:
            if fault.kind == "drop":
                self.close_connection = True
                return
            if fault.kind == "slow":
                time.sleep(fault.seconds)
            elif fault.kind == "status":
                self._send(fault.status, b"<html>Service Unavailable</html>", "text/html")
                return
        if kind == "api":
            self._api(fake, parse_qs(parts.query), fault)
        elif kind == "pdf":
            self._pdf(fake, parts.path.removeprefix("/pdf/"), fault)
        else:
            self._send(404, b"not found", "text/plain")

    def _api(self, fake: FakeArxiv, query: dict[str, list[str]], fault: Fault | None) -> None:
        answer = fake.answer_query(query)
        kind = fault.kind if fault else ""
        body = answer.feed(entries=kind != "empty", malformed=kind == "malformed")
        if kind == "garbage":
            body = body[: len(body) // 2]
        content_type = fault.content_type if kind == "content_type" else FEED_TYPE
        self._send(answer.status, body, content_type)

    def _pdf(self, fake: FakeArxiv, requested: str, fault: Fault | None) -> None:
        hit = fake._lookup(requested.removesuffix(".pdf"))
        if hit is None:
            self._send(404, b"<html>No such paper</html>", "text/html")
            return
        content_type = fault.content_type if fault and fault.kind == "content_type" else None
        if content_type:
            self._send(200, b"<html><body>Please solve this captcha</body></html>", content_type)
        else:
            self._send(200, hit[0].pdf, "application/pdf")


FakeArxiv.handler = _Handler  # defined below the fake, which it serves


@pytest.fixture
def fake_arxiv(settings) -> Iterator[FakeArxiv]:
    """A started FakeArxiv with the arXiv settings pointed at it (import into a test module
    or conftest to use)."""
    with FakeArxiv() as fake:
        fake.configure(settings)
        yield fake
