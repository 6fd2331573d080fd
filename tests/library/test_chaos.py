"""Chaos: hostile files, a killed worker and a stopped heartbeat, against a
live daphne and a live Huey consumer (two worker threads), as in production.

Issue 11 reproduced each of these on `make run`: an EPUB bomb and a
10,000-page PDF froze both worker threads while everyone's uploads waited; a
huge-page PDF preview stalled the web process; a worker killed mid-ingest
left its document "parsing" forever; a dead worker still showed "Live".
"""

from __future__ import annotations

import os
import signal
import struct
import threading
import time
from contextlib import contextmanager

import httpx
import pytest
from django.db import connection
from django.test import Client

from apps.core.models import Heartbeat
from apps.library.index import tables
from apps.library.index.embeddings import get_embedder
from apps.library.models import Chunk, Document
from apps.library.search import search
from tests.support.hostile import epub_bomb, huge_page_pdf, pdf_with_pages, text_pdf
from tests.support.processes import daphne_server, huey_consumer, wait_until

pytestmark = [pytest.mark.chaos, pytest.mark.django_db(transaction=True)]

# A heartbeat a second, stale after four: the badge and /healthz turn within seconds.
LIVENESS = {"JARVIS_HEARTBEAT_SECONDS": "1", "JARVIS_HEARTBEAT_STALE_SECONDS": "4"}


@pytest.fixture(scope="module")
def web(django_db_setup, django_db_blocker):
    """One daphne for the module, enqueuing into the real queue."""
    with (
        django_db_blocker.unblock(),
        daphne_server(JARVIS_TEST_HUEY_IMMEDIATE="0", **LIVENESS) as url,
    ):
        yield url


@contextmanager
def worker():
    with huey_consumer(**LIVENESS) as process:
        wait_until(
            lambda: Heartbeat.objects.filter(component="worker").exists(),
            timeout=60,
            process=process,
        )
        yield process


def session(web: str, user) -> httpx.Client:
    """An HTTP client signed in as `user`, holding a CSRF token."""
    client = Client()
    client.force_login(user)
    http = httpx.Client(base_url=web, timeout=30)
    http.cookies.set("sessionid", client.cookies["sessionid"].value)
    http.get("/library/add/").raise_for_status()
    http.headers["X-CSRFToken"] = http.cookies["csrftoken"]
    return http


def upload(http: httpx.Client, name: str, data: bytes) -> Document:
    response = http.post("/library/add/upload/", files={"files": (name, data)})
    response.raise_for_status()
    return Document.objects.filter(path=name).latest("pk")


def settled(document: Document) -> Document:
    document.refresh_from_db()
    return document if document.status in ("ready", "failed") else None


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_hostile_uploads_fail_with_their_reasons_while_a_note_is_indexed_at_once(web, make_user):
    bob, alice = make_user("bob"), make_user("alice")
    get_embedder().embed_query("warm up the model")  # this test's own searches
    with worker() as process:
        bobs, alices = session(web, bob), session(web, alice)
        bomb = upload(bobs, "novel.epub", epub_bomb(60))
        endless = upload(bobs, "report.pdf", pdf_with_pages(10_000))
        poster = upload(bobs, "poster.pdf", huge_page_pdf())
        note = upload(alices, "quince.md", b"# Quince jam\n\nSimmer the quinces with lemon peel.\n")

        def found() -> bool:
            hits = search(user=alice, query="quince jam lemon peel").results
            return any(hit.document_id == note.pk for hit in hits)

        wait_until(found, timeout=30, interval=0.5, process=process)

        for document in (bomb, endless, poster):
            wait_until(lambda d=document: settled(d), timeout=30, process=process)
        assert (bomb.status, bomb.error) == (
            "failed",
            "the EPUB unpacks to 60 MB, over the 50 MB limit (JARVIS_MAX_UNPACKED_MB)",
        )
        assert (endless.status, endless.error) == (
            "failed",
            "the PDF has 10,000 pages, over the 2,000-page limit (JARVIS_MAX_PDF_PAGES)",
        )
        assert not bomb.chunks.exists() and not endless.chunks.exists()
        # The huge page is harmless to read; only drawing it was dangerous.
        assert poster.status == "ready"

        # Three viewers open its preview at once; the web process keeps
        # answering /healthz within a second all the while.
        previews: list[httpx.Response] = []
        health: list[int] = []

        def view() -> None:
            previews.append(bobs.get(f"/library/doc/{poster.pk}/page/1.png", timeout=60))

        viewers = [threading.Thread(target=view) for _ in range(3)]
        for viewer in viewers:
            viewer.start()
        with httpx.Client(base_url=web, timeout=1.0) as probe:
            while any(v.is_alive() for v in viewers):
                health.append(probe.get("/healthz").status_code)  # a timeout fails the test
                time.sleep(0.1)
        for viewer in viewers:
            viewer.join()
        assert health and set(health) == {200}
        assert [r.status_code for r in previews] == [200, 200, 200]
        width, height = png_size(previews[0].content)
        assert max(width, height) <= 2000 and width * height <= 4_000_000


def test_a_worker_killed_mid_ingest_recovers_the_document_and_liveness_tells_the_truth(
    web, make_user
):
    carol = make_user("carol")
    http = session(web, carol)
    with worker() as process:
        assert httpx.get(f"{web}/healthz", timeout=5).text == "ok"
        survey = upload(http, "survey.pdf", text_pdf(30, "Soil survey"))
        wait_until(
            lambda: Document.objects.get(pk=survey.pk).status == "parsing",
            timeout=30,
            interval=0.05,
            process=process,
        )
        time.sleep(1.0)  # into its parse and embedding
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
    survey.refresh_from_db()
    assert survey.status == "parsing" and not survey.chunks.exists()

    # Nobody is told "Live" any more: the badge and /healthz say so.
    def stale() -> httpx.Response | None:
        response = httpx.get(f"{web}/healthz", timeout=5)
        return response if response.status_code == 503 else None

    answer = wait_until(stale, timeout=15, interval=0.5)
    assert answer.text.startswith("not running: worker: last heartbeat")
    page = http.get("/library/").text
    assert "Background worker not running" in page

    with worker() as process:
        wait_until(lambda: settled(survey), timeout=120, interval=0.5, process=process)
        assert httpx.get(f"{web}/healthz", timeout=5).text == "ok"
        # While it runs; a worker that stops cleanly takes its heartbeat with it.
        assert "Background worker not running" not in http.get("/library/").text
    assert survey.status == "ready", survey.error
    # No partial rows: every passage once, each with its keyword row and vector.
    chunks = list(Chunk.objects.filter(document=survey).values_list("pk", flat=True))
    assert len(chunks) > 30
    state = tables.index_state()
    with connection.cursor() as cursor:
        for table, column in (
            (tables.FTS_TABLE, "rowid"),
            (tables.vec_table(state.generation), "chunk_id"),
        ):
            marks = ",".join("%s" for _ in chunks)
            cursor.execute(f"SELECT count(*) FROM {table} WHERE {column} IN ({marks})", chunks)
            assert cursor.fetchone()[0] == len(chunks), table
    assert Document.objects.filter(path="survey.pdf").count() == 1
