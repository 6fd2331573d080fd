"""Indexing lanes, cancel and retry: what waits, what moves, and what the
person who added a file can do about it. Parsing runs in real sandbox
children; the worker's tasks run inline (Huey's immediate mode)."""

from __future__ import annotations

import re
import threading
import time

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from apps.core.heartbeat import beat
from apps.core.models import JobRun
from apps.library import tasks
from apps.library.ingest import pipeline
from apps.library.ingest.isolated import LONG, ParseCancelled
from apps.library.models import Document
from apps.library.services.adding import upload_add
from apps.library.services.documents import document_ingest
from apps.library.services.queue import cancel_check, document_cancel, token_bump
from tests.support.fixtures import signed_in
from tests.support.hostile import pdf_with_pages, text_pdf

NOTE = b"# Quince jam\n\nSimmer the quinces with lemon peel.\n"


@pytest.fixture
def pending(owner):
    """An upload waiting for the worker (its task not run yet)."""

    def make(name: str = "jam.md", data: bytes = NOTE) -> Document:
        added = upload_add(owner=owner, name=name, data=data)
        assert added.document is not None, added.error
        return added.document

    return make


@pytest.mark.django_db
class TestLanes:
    def test_a_file_with_many_passages_is_indexed_in_the_long_lane(
        self, owner, pending, settings, django_capture_on_commit_callbacks
    ):
        settings.PARSE_QUICK_MAX_CHUNKS = 5
        survey = pending("survey.pdf", text_pdf(6, "Soil survey"))
        with django_capture_on_commit_callbacks(execute=True):
            tasks.ingest_queue(survey)
        survey.refresh_from_db()
        assert survey.status == "ready" and survey.chunks.count() > 5
        # One run for the document, which moved lanes rather than starting over.
        (run,) = JobRun.objects.filter(job="library_ingest")
        assert run.outcome == "ok" and run.summary.startswith("Indexed “Soil survey”")

    def test_a_long_lane_task_waits_in_the_queue_not_on_a_thread(
        self, owner, pending, django_capture_on_commit_callbacks
    ):
        survey = pending("survey.pdf", text_pdf(2, "Soil survey"))
        assert tasks._long_lane.acquire(blocking=False)  # another large file holds it
        try:
            # Holding the lane, a call that waited for it would never return.
            with django_capture_on_commit_callbacks(execute=True):
                tasks.ingest_queue(survey, lane=LONG)
        finally:
            tasks._long_lane.release()
        run = JobRun.objects.get(job="library_ingest")
        assert run.outcome == "queued"
        assert run.summary.endswith("waits for the long lane (another large file is being parsed)")
        survey.refresh_from_db()
        assert survey.status == "pending"

    def test_a_sync_leaves_a_slow_file_to_the_long_lane_and_indexes_the_notes_at_once(
        self, owner, vault, make_source, settings, django_capture_on_commit_callbacks
    ):
        settings.PARSE_QUICK_MAX_CHUNKS = 5
        vault.write("jam.md", NOTE.decode())
        vault.write_bytes("survey.pdf", text_pdf(6, "Soil survey"))
        make_source(owner, vault)
        with django_capture_on_commit_callbacks(execute=False) as queued:
            summary = tasks.sources_sync.body()
        assert Document.objects.get(path="jam.md").status == "ready"
        survey = Document.objects.get(path="survey.pdf")
        assert survey.status == "pending" and summary.endswith("2 files changed")
        with django_capture_on_commit_callbacks(execute=True):
            for callback in queued:  # the long lane's turn
                callback()
        survey.refresh_from_db()
        assert survey.status == "ready" and survey.chunks.count() > 5
        assert JobRun.objects.get(job="library_ingest").detail["document_id"] == survey.pk
        # The next sync sees nothing new.
        assert tasks.sources_sync.body().endswith("no changes")


@pytest.mark.django_db
class TestCancelAndRetry:
    def test_the_owner_cancels_a_waiting_document_and_its_task_skips_it(
        self, owner, pending, django_capture_on_commit_callbacks
    ):
        jam = pending()
        with django_capture_on_commit_callbacks(execute=False) as queued:
            tasks.ingest_queue(jam)
        response = signed_in(owner).post(f"/library/doc/{jam.pk}/cancel/")
        assert response.status_code == 302
        jam.refresh_from_db()
        assert (jam.status, jam.error) == ("failed", "cancelled by Olivia")
        for callback in queued:  # the worker reaches the task later
            callback()
        jam.refresh_from_db()
        assert (jam.status, jam.chunks.count()) == ("failed", 0)
        assert JobRun.objects.get(job="library_ingest").summary.endswith("skipped")

    def test_retry_queues_it_again_and_it_is_indexed(
        self, owner, pending, django_capture_on_commit_callbacks
    ):
        jam = pending()
        document_cancel(user=owner, document=jam)
        with django_capture_on_commit_callbacks(execute=True):
            response = signed_in(owner).post(
                f"/library/doc/{jam.pk}/retry/", HTTP_HX_REQUEST="true"
            )
        assert response.status_code == 200
        jam.refresh_from_db()
        assert jam.status == "ready" and jam.chunks.exists()

    def test_the_add_page_offers_cancel_and_not_retry_for_a_waiting_upload(
        self, owner, django_capture_on_commit_callbacks
    ):
        with django_capture_on_commit_callbacks(execute=False):
            html = (
                signed_in(owner)
                .post(
                    "/library/add/upload/",
                    {"files": [SimpleUploadedFile("jam.md", NOTE)]},
                    HTTP_HX_REQUEST="true",
                )
                .content.decode()
            )
        # Try again is for a failed file; a waiting one is already queued.
        assert 'data-testid="cancel"' in html and 'data-testid="retry"' not in html
        jam = Document.objects.get(path="jam.md")
        assert f'action="/library/doc/{jam.pk}/cancel/"' in html

    def test_the_document_page_offers_them_to_its_owner_only(
        self, owner, member, pending, settings
    ):
        jam = pending()
        jam.source.sharing = "household"
        jam.source.save()
        assert (
            'data-testid="cancel"'
            in signed_in(owner).get(f"/library/doc/{jam.pk}/").content.decode()
        )
        seen = signed_in(member).get(f"/library/doc/{jam.pk}/")
        assert seen.status_code == 200 and 'data-testid="cancel"' not in seen.content.decode()

    @pytest.mark.parametrize("action", ["cancel", "retry"])
    def test_nobody_else_can_cancel_or_retry(self, owner, member, outsider, pending, action):
        jam = pending()
        jam.source.sharing = "household"
        jam.source.save()
        for person in (member, outsider):
            assert signed_in(person).post(f"/library/doc/{jam.pk}/{action}/").status_code == 404
        jam.refresh_from_db()
        assert jam.status == "pending"

    @pytest.mark.parametrize("action", ["cancel", "retry"])
    def test_cancel_and_retry_need_the_csrf_token(self, owner, pending, action):
        jam = pending()
        response = signed_in(owner, csrf=True).post(f"/library/doc/{jam.pk}/{action}/")
        assert response.status_code == 403
        jam.refresh_from_db()
        assert jam.status == "pending"


@pytest.mark.django_db(transaction=True)
def test_cancelling_a_document_mid_parse_stops_its_parser(owner, pending, settings):
    """A 1,999-page PDF takes seconds to parse; cancel stops it within one."""
    page = "\n".join(f"Line {i} of an almanac that goes on and on." for i in range(50))
    almanac = pending("almanac.pdf", pdf_with_pages(1999, text=page))
    outcome: list[str] = []

    token = token_bump(almanac)

    def worker() -> None:
        outcome.append(tasks.ingest_task.body(almanac.pk, run=_Recorder(), token=token, lane=LONG))

    thread = threading.Thread(target=worker)
    thread.start()
    deadline = time.monotonic() + 30
    while Document.objects.get(pk=almanac.pk).status != "parsing":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    document_cancel(user=owner, document=almanac)
    thread.join(timeout=30)
    assert not thread.is_alive()  # stopped between slices, not after all of them
    almanac.refresh_from_db()
    assert (almanac.status, almanac.error, almanac.chunks.count()) == (
        "failed",
        "cancelled by Olivia",
        0,
    )
    assert outcome == ["“almanac.pdf”: cancelled"]


class _Recorder:
    def defer(self, **changes) -> None:
        raise AssertionError("a long-lane parse on a free lane is not deferred")


class _Watching:
    """The real embedder; before each slice after the first it notes what the
    document's page says, and `on_first` runs once the first slice is done."""

    def __init__(self, inner, document: Document, on_first=None) -> None:
        self.inner, self.document, self.on_first = inner, document, on_first
        self.name, self.dimension = inner.name, inner.dimension
        self.calls = 0
        self.shown: list[str] = []

    def embed_passages(self, texts):
        self.calls += 1
        if self.calls > 1:
            self.shown.append(Document.objects.get(pk=self.document.pk).progress)
        vectors = self.inner.embed_passages(texts)
        if self.calls == 1 and self.on_first is not None:
            self.on_first()
            time.sleep(1.1)  # past the cancel check's once-a-second pace
        return vectors


@pytest.mark.django_db
def test_a_large_document_shows_how_far_its_embedding_has_got(
    owner, pending, embedder, monkeypatch
):
    # "Large" is more than one slice: a small slice keeps the document (and
    # the embedding) small, the progress it shows is the same.
    monkeypatch.setattr(pipeline, "EMBED_SLICE", 16)
    survey = pending("survey.pdf", text_pdf(8, "Soil survey"))  # ~24 passages: two slices
    watching = _Watching(embedder, survey)

    done = document_ingest(document=survey, embedder=watching)

    total = done.chunks.count()
    assert done.status == "ready" and 16 < total <= 32 and done.progress == ""
    assert watching.shown == [f"embedding 16 of {total} passages"]


@pytest.mark.django_db(transaction=True)
def test_cancelling_while_a_large_document_embeds_stops_before_the_rest(
    owner, pending, embedder, monkeypatch
):
    monkeypatch.setattr(pipeline, "EMBED_SLICE", 16)
    survey = pending("survey.pdf", text_pdf(20, "Soil survey"))  # ~60 passages: four slices
    token = token_bump(survey)
    watching = _Watching(
        embedder, survey, on_first=lambda: document_cancel(user=owner, document=survey)
    )

    with pytest.raises(ParseCancelled):
        document_ingest(
            document=survey, embedder=watching, cancelled=cancel_check(survey.pk, token)
        )

    assert watching.calls == 1  # the other three slices were never embedded
    survey.refresh_from_db()
    assert (survey.status, survey.error, survey.chunks.count()) == (
        "failed",
        "cancelled by Olivia",
        0,
    )


@pytest.mark.django_db
class TestWaitingRows:
    """What a waiting file's row says and offers (apps.library.status,
    apps.library.worker_queue)."""

    def test_a_waiting_file_offers_cancel_but_not_try_again(self, owner, pending):
        jam = pending()
        for html in (
            signed_in(owner).get(f"/library/doc/{jam.pk}/").content.decode(),
            signed_in(owner).get(f"/library/doc/{jam.pk}/status/").content.decode(),
        ):
            assert 'data-testid="cancel"' in html
            assert 'data-testid="retry"' not in html

    def test_a_failed_file_offers_try_again_but_not_cancel(self, owner, pending):
        jam = pending()
        document_cancel(user=owner, document=jam)
        html = signed_in(owner).get(f"/library/doc/{jam.pk}/").content.decode()
        assert 'data-testid="retry"' in html and 'data-testid="cancel"' not in html

    def test_the_table_numbers_every_waiting_row_once_with_none_skipped(
        self, owner, pending, vault, make_source
    ):
        beat()  # the worker runs
        for name in ("a.md", "b.md"):
            pending(name, f"# {name}\n\nWords.\n".encode())
        # A folder's file the sync left waiting sits in the same queue.
        vault.write("notes/c.md", "# C\n\nWords.\n")
        folder = make_source(owner, vault)
        Document.objects.create(
            source=folder, path="notes/c.md", kind="note", content_hash="c", status="pending"
        )
        for name in ("d.md", "e.md"):
            pending(name, f"# {name}\n\nWords.\n".encode())
        html = signed_in(owner).get("/library/").content.decode()
        places = re.findall(r'data-testid="queue-place">([^<]*)<', html)
        assert sorted(p.split(";")[0] for p in places) == [
            "2nd in line", "3rd in line", "4th in line", "5th in line", "Next in line",
        ]  # fmt: skip

    def test_a_waiting_file_does_not_promise_a_start_while_the_worker_is_down(self, owner, pending):
        jam = pending()
        html = signed_in(owner).get(f"/library/doc/{jam.pk}/status/").content.decode()
        # No heartbeat: the header says "Background worker not running".
        assert "in a moment" not in html
        assert "Next in line; the background worker is not running" in html
        page = signed_in(owner).get("/library/").content.decode()
        assert 'data-testid="worker-down"' in page and "in a moment" not in page
        beat()
        html = signed_in(owner).get(f"/library/doc/{jam.pk}/status/").content.decode()
        assert "Next in line; the worker will start on it in a moment." in html
