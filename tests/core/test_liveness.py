"""Liveness that tells the truth: the worker's heartbeat, the header badge,
/healthz, and the Jobs page's view of what is queued and running."""

from __future__ import annotations

import signal
from datetime import timedelta

import pytest
from django.utils import timezone

from apps.core.heartbeat import beat
from apps.core.jobs import close_overrun_runs, job_run
from apps.core.models import Heartbeat, JobRun
from tests.support.fixtures import signed_in
from tests.support.processes import huey_consumer, wait_until

BADGE = "Background worker not running"


def stale_by(seconds: int) -> None:
    beat()
    Heartbeat.objects.update(beat_at=timezone.now() - timedelta(seconds=seconds))


# /healthz is an async view: its query runs in another thread, which sees
# only committed rows.
@pytest.mark.django_db(transaction=True)
class TestHealthAndBadge:
    def test_a_fresh_heartbeat_is_healthy_and_shows_no_badge(self, client, owner):
        beat()
        response = client.get("/healthz")
        assert (response.status_code, response.content) == (200, b"ok")
        assert BADGE not in signed_in(owner).get("/library/").content.decode()

    def test_no_heartbeat_at_all_is_a_worker_that_never_started(self, client, owner):
        response = client.get("/healthz")
        assert response.status_code == 503
        assert response.content.decode() == "not running: worker: no heartbeat yet"
        assert BADGE in signed_in(owner).get("/library/").content.decode()

    def test_a_stale_heartbeat_turns_health_and_everyones_badge(
        self, client, owner, member, settings
    ):
        settings.HEARTBEAT_STALE_SECONDS = 120
        stale_by(600)
        response = client.get("/healthz")
        assert response.status_code == 503
        assert response.content.decode() == "not running: worker: last heartbeat 600 s ago"
        for person in (owner, member):
            assert BADGE in signed_in(person).get("/chat/").content.decode()

    def test_a_heartbeat_just_inside_the_stale_age_is_still_healthy(self, client, settings):
        settings.HEARTBEAT_STALE_SECONDS = 120
        stale_by(100)
        assert client.get("/healthz").status_code == 200


@pytest.mark.django_db
class TestJobsPage:
    def test_members_see_their_own_queued_and_running_work_with_its_age(self, owner, member):
        JobRun.objects.create(
            job="library_ingest",
            user=owner,
            outcome=JobRun.Outcome.QUEUED,
            queued_at=timezone.now() - timedelta(minutes=3, seconds=5),
            detail={"title": "jam.md"},
        )
        JobRun.objects.create(
            job="library_ingest",
            user=owner,
            outcome=JobRun.Outcome.RUNNING,
            started_at=timezone.now() - timedelta(seconds=42),
            summary="",
            detail={"title": "survey.pdf"},
        )
        JobRun.objects.create(
            job="library_ingest",
            user=member,
            outcome=JobRun.Outcome.QUEUED,
            detail={"title": "max-secret.md"},
        )
        page = signed_in(owner).get("/jobs/").content.decode()
        assert "waiting 3 min 5 s" in page and "jam.md" in page
        assert "running 42 s" in page and "survey.pdf" in page
        assert "max-secret.md" not in page

    def test_admins_see_everyones(self, owner, admin):
        JobRun.objects.create(
            job="library_ingest",
            user=owner,
            outcome=JobRun.Outcome.QUEUED,
            detail={"title": "jam.md"},
        )
        page = signed_in(admin).get("/jobs/").content.decode()
        assert "jam.md" in page and "Olivia" in page

    def test_a_member_with_nothing_waiting_is_told_so(self, owner):
        page = signed_in(owner).get("/jobs/").content.decode()
        assert "Nothing of yours is queued or running." in page


@pytest.mark.django_db
def test_the_watchdogs_verdict_stands_when_the_overrunning_job_finally_ends(settings):
    settings.JOB_TIME_LIMIT_MINUTES = 1
    with job_run("test_ok_probe") as run:
        JobRun.objects.filter(pk=run.run.pk).update(
            started_at=timezone.now() - timedelta(minutes=5)
        )
        assert [r.pk for r in close_overrun_runs()] == [run.run.pk]
        run.summary = "finished at last"
    run.run.refresh_from_db()
    assert run.run.outcome == "error" and run.run.summary.startswith("stopped: ran longer")


@pytest.mark.django_db(transaction=True)
def test_a_real_worker_beats_and_clears_its_heartbeat_when_it_stops():
    with huey_consumer(JARVIS_HEARTBEAT_SECONDS="1", JARVIS_HEARTBEAT_STALE_SECONDS="4") as worker:
        first = wait_until(
            lambda: Heartbeat.objects.filter(component="worker").first(),
            timeout=60,
            process=worker,
        )
        assert first.pid == worker.pid
        wait_until(
            lambda: Heartbeat.objects.get(component="worker").beat_at > first.beat_at,
            timeout=10,
            process=worker,
        )
        worker.send_signal(signal.SIGINT)  # a clean stop
        worker.wait(timeout=30)
    assert not Heartbeat.objects.filter(component="worker").exists()
