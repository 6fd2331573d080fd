"""Schedules an admin sets in instance settings, the job lock, "run now" and
the live Jobs page."""

from __future__ import annotations

import json
from datetime import datetime
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client
from huey.contrib.djhuey import HUEY

from apps.core.jobs import REGISTRY, close_stale_runs
from apps.core.models import JobRun
from apps.core.schedules import Every
from apps.instance.selectors import instance_settings, setting_reader

pytestmark = pytest.mark.django_db


def set_interval(minutes: int) -> None:
    row = instance_settings()
    row.sync_interval_minutes = minutes
    row.save()


def test_an_interval_is_read_from_instance_settings_at_run_time():
    every = Every(setting_reader("sync_interval_minutes"))
    set_interval(30)
    assert every.description == "every 30 minutes"
    assert every.as_huey()(datetime(2026, 11, 30, 10, 30))
    assert not every.as_huey()(datetime(2026, 11, 30, 10, 45))
    assert every.next_after(datetime(2026, 11, 30, 10, 31, 5)) == datetime(2026, 11, 30, 11, 0)
    set_interval(15)  # an admin's change applies from the next check, no restart
    assert every.as_huey()(datetime(2026, 11, 30, 10, 45))
    assert every.next_after(datetime(2026, 11, 30, 10, 31)) == datetime(2026, 11, 30, 10, 45)


def test_the_jobs_page_and_sync_status_show_every_scheduled_job(admin):
    set_interval(20)
    client = Client()
    client.force_login(admin)
    page = client.get("/jobs/").content.decode()
    for name in ("sources_sync", "inbox_scan", "draft_retention", "heartbeat"):
        assert f'data-job="{name}"' in page
    assert "every 20 minutes" in page
    out = StringIO()
    call_command("sync_status", "--json", stdout=out)
    rows = {row["job"]: row for row in json.loads(out.getvalue())}
    assert rows["sources_sync"]["schedule"] == "every 20 minutes"
    assert rows["sources_sync"]["next_run"]
    assert {"inbox_scan", "draft_retention"} <= set(rows)


def test_an_admin_runs_a_job_now(admin):
    client = Client()
    client.force_login(admin)
    response = client.post("/jobs/heartbeat/run/")
    assert response.status_code == 302
    # Tests run tasks inline: the queued run has happened and is recorded.
    assert JobRun.objects.get(job="heartbeat").outcome == JobRun.Outcome.OK
    assert "is queued" in client.get("/jobs/").content.decode()


def test_only_admins_can_run_jobs_and_unknown_jobs_do_not_exist(owner, admin):
    client = Client()
    client.force_login(owner)
    assert client.post("/jobs/heartbeat/run/").status_code == 404
    assert "Run now" not in client.get("/jobs/").content.decode()
    client.force_login(admin)
    assert client.post("/jobs/no_such_job/run/").status_code == 404
    assert (
        client.post("/jobs/library_ingest/run/").status_code == 404
    )  # on demand: needs its arguments
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(admin)
    assert strict.post("/jobs/heartbeat/run/").status_code == 403
    assert not JobRun.objects.exists()


def test_the_page_refreshes_itself_and_shows_a_running_job(admin):
    JobRun.objects.create(job="sources_sync", pid=None)  # a run in progress (pid unknown)
    client = Client()
    client.force_login(admin)
    partial = client.get("/jobs/", HTTP_HX_REQUEST="true").content.decode()
    assert partial.lstrip().startswith('<div id="jobs-live"')
    assert 'hx-trigger="every 3s"' in partial
    assert 'data-running="1"' in partial and "running since" in partial


def test_two_runs_of_one_job_never_overlap():
    from apps.library.tasks import sources_sync

    lock = HUEY.lock_task("sources_sync")
    lock.acquire()
    try:
        sources_sync()  # finds the lock taken: skipped, not recorded
    finally:
        lock.release()
    assert not JobRun.objects.filter(job="sources_sync").exists()
    sources_sync()
    assert JobRun.objects.get(job="sources_sync").summary == "no note folders registered"


def test_runs_left_running_by_a_dead_worker_are_closed_as_interrupted():
    import os

    dead = JobRun.objects.create(job="inbox_scan", pid=2**22 + 12345)  # no such process
    alive = JobRun.objects.create(job="kb_reindex", pid=os.getppid())  # e.g. a CLI command
    assert close_stale_runs() == 1
    dead.refresh_from_db()
    alive.refresh_from_db()
    assert dead.outcome == JobRun.Outcome.ERROR and dead.summary.startswith("interrupted")
    assert alive.outcome == JobRun.Outcome.RUNNING
    assert REGISTRY["sources_sync"].at_start
