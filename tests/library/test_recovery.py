"""What a worker finds when it starts, and what a worker does about a job
that runs too long: documents a killed worker left half-indexed are queued
again once; one the parser died on twice is failed for good."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from huey.contrib.djhuey import HUEY

from apps.core.jobs import close_lost_runs, close_overrun_runs
from apps.core.models import JobRun
from apps.library.models import Document
from apps.library.services.adding import upload_add
from apps.library.tasks import ingest_task, recover_documents

pytestmark = pytest.mark.django_db

NOTE = b"# Quince jam\n\nSimmer the quinces with lemon peel.\n"


@pytest.fixture
def left(owner):
    """An upload as a killed worker left it: pending or parsing, no task on its way."""

    def make(status: str, *, crashes: int = 0, name: str = "jam.md") -> Document:
        document = upload_add(owner=owner, name=name, data=NOTE).document
        Document.objects.filter(pk=document.pk).update(status=status, parser_crashes=crashes)
        document.refresh_from_db()
        return document

    return make


def test_a_document_left_waiting_is_queued_again_and_indexed(
    left, django_capture_on_commit_callbacks
):
    jam = left("pending")
    with django_capture_on_commit_callbacks(execute=True):
        recover_documents()
    jam.refresh_from_db()
    assert jam.status == "ready" and jam.chunks.exists()


def test_a_document_its_worker_died_parsing_is_tried_once_more(
    left, django_capture_on_commit_callbacks
):
    jam = left("parsing")
    with django_capture_on_commit_callbacks(execute=True):
        recover_documents()
    jam.refresh_from_db()
    assert jam.status == "ready"
    assert jam.parser_crashes == 0  # indexed: the count starts over


def test_the_second_time_it_is_failed_and_not_retried(left, django_capture_on_commit_callbacks):
    jam = left("parsing", crashes=1)
    with django_capture_on_commit_callbacks(execute=True):
        recover_documents()
    jam.refresh_from_db()
    assert (jam.status, jam.error) == ("failed", "stopped the parser twice; not retried")
    assert not JobRun.objects.filter(job="library_ingest").exists()


def test_a_document_whose_task_is_still_queued_is_left_alone(
    owner, left, django_capture_on_commit_callbacks
):
    jam = left("pending")
    JobRun.objects.create(
        job="library_ingest",
        user=owner,
        outcome=JobRun.Outcome.QUEUED,
        detail={"document_id": jam.pk},
    )
    with django_capture_on_commit_callbacks(execute=True):
        recover_documents()
    jam.refresh_from_db()
    assert jam.status == "pending"
    assert JobRun.objects.filter(job="library_ingest").count() == 1


def test_a_queued_run_whose_task_the_queue_lost_is_closed(owner):
    # The in-memory queue outlives a test: tasks an earlier test scheduled for
    # later (a long-lane wait) would still be there, with run ids reused here.
    HUEY.flush()
    run = JobRun.objects.create(
        job="library_ingest", user=owner, outcome=JobRun.Outcome.QUEUED, detail={}
    )
    kept = JobRun.objects.create(
        job="library_ingest", user=owner, outcome=JobRun.Outcome.QUEUED, detail={}
    )
    # In the queue: the kept run's task, and a task queued the plain way (no run).
    ingest_task.schedule(args=(1,), kwargs={"run_id": kept.pk}, delay=3600)
    ingest_task.schedule(args=(2,), delay=3600)
    assert close_lost_runs() == 1
    run.refresh_from_db()
    assert (run.outcome, run.summary) == ("error", "lost: the queue no longer held this job")
    kept.refresh_from_db()
    assert kept.outcome == "queued"
    HUEY.flush()


def test_an_ingest_past_the_time_limit_is_failed_with_its_document(owner, left, settings):
    settings.JOB_TIME_LIMIT_MINUTES = 30
    jam = left("parsing")
    run = JobRun.objects.create(
        job="library_ingest",
        user=owner,
        outcome=JobRun.Outcome.RUNNING,
        started_at=timezone.now() - timedelta(minutes=31),
        detail={"document_id": jam.pk},
    )
    fresh = JobRun.objects.create(job="sources_sync", outcome=JobRun.Outcome.RUNNING)
    assert close_overrun_runs() == [run]
    run.refresh_from_db()
    assert run.outcome == "error"
    assert run.summary == (
        "stopped: ran longer than its 30-minute limit (JARVIS_JOB_TIME_LIMIT_MINUTES)"
    )
    jam.refresh_from_db()
    assert (jam.status, jam.error) == (
        "failed",
        "indexing ran longer than 30 minutes, the limit (JARVIS_JOB_TIME_LIMIT_MINUTES)",
    )
    fresh.refresh_from_db()
    assert fresh.outcome == "running"
