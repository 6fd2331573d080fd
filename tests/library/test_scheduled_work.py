"""The worker keeping the library fresh on its own, with a real Huey consumer
(started as production starts it): scheduled syncs, a killed worker in the
middle of a large PDF, and the lock such a worker leaves behind."""

from __future__ import annotations

import os
import signal
import time

import pymupdf
import pytest
from huey.contrib.djhuey import HUEY

from apps.core.models import JobRun
from apps.instance.selectors import instance_settings
from apps.library.models import Document, Source
from tests.support.processes import huey_consumer, wait_until

pytestmark = pytest.mark.django_db(transaction=True)

LONG_AGO = time.time() - 3600


@pytest.fixture
def every_minute():
    row = instance_settings()
    row.sync_interval_minutes = 1
    row.inbox_interval_minutes = 1
    row.save()


def worker(vaults_root, **env):
    return huey_consumer(JARVIS_VAULTS_ROOT=str(vaults_root), JARVIS_INBOX_QUIET_SECONDS="0", **env)


def test_a_scheduled_sync_picks_up_a_new_note(owner, vault, make_source, vaults_root, every_minute):
    vault.write("plans.md", "# Plans\n\nPaint the fence in May.\n")
    make_source(owner, vault, name="Notes")
    # The consumer checks its schedules every 2 s instead of every minute
    # (tests/settings.py); each check still asks the every-minute schedule.
    with worker(vaults_root, JARVIS_TEST_SCHEDULE_CHECK_SECONDS="2") as process:
        # At start: the worker syncs once (and the schedule is due too; the
        # job lock lets only one of them run at a time).
        wait_until(
            lambda: Document.objects.filter(title="Plans").exists(), timeout=60, process=process
        )
        vault.write("garden.md", "# Garden\n\nPlant garlic in October.\n")
        # The sync at start happens once: only a later check of the
        # schedule syncs again.
        wait_until(
            lambda: Document.objects.filter(title="Garden").exists(), timeout=60, process=process
        )
        # The run that wrote it records its outcome just after: wait for that
        # too before stopping the worker (stopping it first leaves it running).
        runs = JobRun.objects.filter(job="sources_sync")
        wait_until(
            lambda: runs.filter(outcome=JobRun.Outcome.OK).count() >= 2,
            timeout=30,
            process=process,
        )
    assert not runs.filter(outcome=JobRun.Outcome.ERROR).exists()


def big_pdf(title: str, pages: int) -> bytes:
    doc = pymupdf.open()
    for number in range(pages):
        page = doc.new_page()
        lines = [f"{title}, page {number}."] + [
            f"Observation {number}.{i}: soil moisture {i * 3 % 41} percent at depth {i} cm."
            for i in range(40)
        ]
        page.insert_text((50, 60), "\n".join(lines), fontsize=9)
    doc.set_metadata({"title": title})
    data = doc.tobytes()
    doc.close()
    return data


def test_a_worker_killed_mid_pdf_leaves_the_old_entry_and_the_next_scan_completes_it(
    owner, vault, make_source, vaults_root, every_minute
):
    inbox = make_source(owner, vault, name="Inbox", kind=Source.Kind.INBOX)
    path = vault.write_bytes("survey.pdf", big_pdf("Soil survey, first draft", pages=2))
    os.utime(path, (LONG_AGO, LONG_AGO))
    with worker(vaults_root) as process:
        wait_until(
            lambda: Document.objects.filter(source=inbox).exists(), timeout=60, process=process
        )
        old = Document.objects.get(source=inbox)
        old_chunks = old.chunks.count()
        # A much larger new version replaces the file; the worker is killed
        # while it parses and embeds it (60 pages: about 5 s of work on two
        # idle cores once the model is loaded, so the kill lands inside it).
        path.write_bytes(big_pdf("Soil survey, final", pages=60))
        os.utime(path, (LONG_AGO + 60, LONG_AGO + 60))
        HUEY.immediate = False
        try:
            from apps.library.tasks import inbox_scan

            inbox_scan()  # enqueue now rather than waiting for the schedule
        finally:
            HUEY.immediate = True
        wait_until(
            lambda: JobRun.objects.filter(job="inbox_scan", outcome="running").exists(),
            timeout=60,
            process=process,
        )
        time.sleep(1.5)
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
    entry = Document.objects.get(source=inbox)
    assert entry.pk == old.pk
    assert (entry.title, entry.chunks.count()) == ("Soil survey, first draft", old_chunks)
    interrupted = JobRun.objects.get(job="inbox_scan", outcome="running")

    with worker(vaults_root) as process:
        wait_until(
            lambda: Document.objects.get(source=inbox).title == "Soil survey, final",
            timeout=120,
            process=process,
        )
    entry = Document.objects.get(source=inbox)
    assert entry.status == Document.Status.READY and entry.chunks.count() > old_chunks * 10
    interrupted.refresh_from_db()
    assert interrupted.outcome == JobRun.Outcome.ERROR
    assert interrupted.summary.startswith("interrupted")


def test_a_lock_left_by_a_killed_worker_is_cleared_when_the_worker_starts(
    owner, vault, make_source, vaults_root
):
    from apps.library.tasks import sources_sync

    vault.write("a.md", "# Alpha\n\ntext\n")
    make_source(owner, vault, name="Notes")
    HUEY.immediate = False
    try:
        HUEY.lock_task("sources_sync").acquire()  # what a SIGKILLed run leaves behind
        assert HUEY.is_locked("sources_sync")
        with worker(vaults_root) as process:
            sources_sync()
            wait_until(
                lambda: JobRun.objects.filter(job="sources_sync", outcome="ok").exists(),
                timeout=60,
                process=process,
            )
    finally:
        HUEY.immediate = True
    assert Document.objects.filter(title="Alpha").exists()
