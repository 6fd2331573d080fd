"""A fake bioRxiv: a real HTTP server on 127.0.0.1 that speaks the details API.

    with FakeBiorxiv([FakePreprint(...), ...]) as fake:
        fake.configure(settings)      # BIORXIV_API_URL here, its host:port allowed by the fetch guard
        fake.fail_next(2)             # the next two answers are HTTP 503
        fetch_category("bioinformatics", start=..., end=..., limit=10)
        assert len(fake.requests) == 3

It answers `/details/{server}/{from}/{to}/{cursor}[/json][?category=name_with_underscores]`
like api.biorxiv.org: `{"messages": [{"status": "ok", "interval", "cursor", "count",
"count_new_papers", "total"}], "collection": [...]}` with `page_size` records a page
(100 on the real API; tests make it small to exercise paging), records posted within
the interval (inclusive), oldest first as the real API lists them, every version of a
preprint as its own record, `total` as a string; `{"messages": [{"status": "no posts
found"}], "collection": []}` for an empty window. Faults are queued and each is used up
by one request: an empty page (the total kept), an HTTP status, a body that is not JSON,
an extra malformed record, a dropped connection, a slow answer, a wrong content type.
Every request is recorded (`requests`: path, query, parsed route).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.fakes.serving import QuietHandler, ServedFake

JSON_TYPE = "application/json; charset=utf-8"


@dataclass
class FakePreprint:
    doi: str
    title: str
    authors: list[str]
    abstract: str
    posted: date
    category: str  # as the API writes it: "bioinformatics", "cell biology"
    version: int = 1
    type: str = "new results"

    def record(self) -> dict:
        return {
            "doi": self.doi,
            "title": self.title,
            "authors": "; ".join(self.authors),
            "author_corresponding": self.authors[0] if self.authors else "",
            "author_corresponding_institution": "Fake Institute",
            "date": self.posted.isoformat(),
            "version": str(self.version),
            "type": self.type,
            "license": "cc_by",
            "category": self.category,
            "jatsxml": f"https://www.biorxiv.org/content/early/{self.doi}.source.xml",
            "abstract": self.abstract,
            "published": "NA",
            "server": "bioRxiv",
        }


@dataclass
class Fault:
    kind: str  # empty | status | garbage | malformed | drop | slow | content_type
    times: int | None = 1  # None: every request from now on
    status: int = 503
    seconds: float = 1.0
    content_type: str = "text/html; charset=utf-8"


@dataclass
class RecordedRequest:
    path: str
    query: dict[str, list[str]]
    server: str = ""
    start: str = ""
    end: str = ""
    cursor: int | None = None
    category: str = ""
    at: float = field(default_factory=time.monotonic)


class FakeBiorxiv(ServedFake):
    def __init__(self, preprints: list[FakePreprint] | None = None, *, page_size: int = 100):
        self.preprints: list[FakePreprint] = list(preprints or [])
        self.page_size = page_size
        self.requests: list[RecordedRequest] = []
        self._faults: list[Fault] = []
        self._lock = threading.Lock()

    @property
    def host_port(self) -> str:
        return self.base_url.removeprefix("http://")

    def configure(self, settings) -> None:
        """Points BIORXIV_API_URL (pytest-django's `settings`) here and exempts this
        server from the fetch guard's public-address rule, as an admin would a mirror."""
        settings.BIORXIV_API_URL = self.base_url
        settings.FETCH_ALLOW_HOSTS = [*settings.FETCH_ALLOW_HOSTS, self.host_port]

    # --- catalogue and faults

    def add(self, *preprints: FakePreprint) -> None:
        self.preprints.extend(preprints)

    def queue(self, fault: Fault) -> None:
        with self._lock:
            self._faults.append(fault)

    def empty_next(self, times: int | None = 1) -> None:
        self.queue(Fault("empty", times=times))

    def fail_next(self, times: int | None = 1, *, status: int = 503) -> None:
        self.queue(Fault("status", times=times, status=status))

    def garbage_next(self, times: int | None = 1) -> None:
        self.queue(Fault("garbage", times=times))

    def malformed_next(self, times: int | None = 1) -> None:
        self.queue(Fault("malformed", times=times))

    def drop_next(self, times: int | None = 1) -> None:
        self.queue(Fault("drop", times=times))

    def slow_next(self, times: int | None = 1, *, seconds: float = 1.0) -> None:
        self.queue(Fault("slow", times=times, seconds=seconds))

    def wrong_type_next(self, times: int | None = 1, *, content_type="text/html") -> None:
        self.queue(Fault("content_type", times=times, content_type=content_type))

    def _take_fault(self) -> Fault | None:
        with self._lock:
            if not self._faults:
                return None
            fault = self._faults[0]
            if fault.times is not None:
                fault.times -= 1
                if fault.times <= 0:
                    self._faults.pop(0)
            return fault

    # --- answers

    def answer(self, start: date, end: date, cursor: int, category: str) -> dict:
        """The details API's answer before any fault."""
        wanted = category.replace("_", " ").lower() if category else ""
        matching = [
            p
            for p in sorted(self.preprints, key=lambda p: (p.posted, p.doi, p.version))
            if start <= p.posted <= end and (not wanted or p.category.lower() == wanted)
        ]
        if not matching:
            return {"messages": [{"status": "no posts found"}], "collection": []}
        page = matching[cursor : cursor + self.page_size]
        return {
            "messages": [
                {
                    "status": "ok",
                    "interval": f"{start.isoformat()}:{end.isoformat()}",
                    "cursor": str(cursor),
                    "count": len(page),
                    "count_new_papers": str(sum(1 for p in page if p.version == 1)),
                    "total": str(len(matching)),
                }
            ],
            "collection": [p.record() for p in page],
        }


class _Handler(QuietHandler):
    owner: FakeBiorxiv

    def do_GET(self) -> None:
        fake = self.owner
        parts = urlsplit(self.path)
        query = parse_qs(parts.query)
        pieces = [p for p in parts.path.split("/") if p]
        if pieces and pieces[-1] == "json":
            pieces.pop()
        recorded = RecordedRequest(parts.path, query)
        with fake._lock:
            fake.requests.append(recorded)
        if len(pieces) != 5 or pieces[0] != "details":
            self._send(404, b'{"messages":[{"status":"not found"}]}', JSON_TYPE)
            return
        try:
            start, end = date.fromisoformat(pieces[2]), date.fromisoformat(pieces[3])
            cursor = int(pieces[4])
        except ValueError:
            self._send(200, b'{"messages":[{"status":"invalid date or cursor"}]}', JSON_TYPE)
            return
        recorded.server, recorded.start, recorded.end = pieces[1], pieces[2], pieces[3]
        recorded.cursor = cursor
        recorded.category = query.get("category", [""])[0]
        fault = fake._take_fault()
        if fault is not None:
            if fault.kind == "drop":
                self.close_connection = True
                return
            if fault.kind == "slow":
                time.sleep(fault.seconds)
            if fault.kind == "status":
                self._send(fault.status, b"<html>Service Unavailable</html>", "text/html")
                return
        data = fake.answer(start, end, cursor, recorded.category)
        kind = fault.kind if fault else ""
        if kind == "empty":
            data["collection"] = []
            if "count" in data["messages"][0]:
                data["messages"][0]["count"] = 0
        if kind == "malformed":
            data["collection"].insert(
                1 if data["collection"] else 0,
                {"abstract": "A record that lost its doi and title.", "date": "2026-01-01"},
            )
        body = json.dumps(data).encode()
        if kind == "garbage":
            body = body[: len(body) // 2]
        content_type = fault.content_type if kind == "content_type" else JSON_TYPE
        self._send(200, body, content_type)


FakeBiorxiv.handler = _Handler  # defined below the fake, which it serves


@pytest.fixture
def fake_biorxiv(settings) -> Iterator[FakeBiorxiv]:
    """A started FakeBiorxiv (no preprints: `add` some) with the settings pointed at it."""
    with FakeBiorxiv() as fake:
        fake.configure(settings)
        yield fake
