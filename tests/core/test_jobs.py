"""Background jobs: each run is recorded; a failing job is recorded as failed
and the worker carries on; the Jobs page and sync_status say what happened."""

import json
from datetime import datetime
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone
from huey.contrib.djhuey import HUEY

from apps.core.jobs import REGISTRY, job_run
from apps.core.models import JobRun
from apps.core.schedules import Cron
from apps.core.tasks import heartbeat
from tests.support.processes import huey_consumer, wait_until
from tests.support.tasks import failing_probe, ok_probe


def test_a_successful_run_is_recorded_with_its_summary(db, owner):
    with job_run("sample", user_id=owner.pk) as run:
        run.summary = "did   the\nthing"
    recorded = JobRun.objects.get(job="sample")
    assert recorded.outcome == JobRun.Outcome.OK
    assert recorded.summary == "did the thing"
    assert recorded.user == owner
    assert recorded.finished_at >= recorded.started_at


def test_a_failing_run_is_recorded_and_the_error_propagates(db):
    with pytest.raises(ValueError), job_run("sample"):
        raise ValueError("disk on fire")
    recorded = JobRun.objects.get(job="sample")
    assert recorded.outcome == JobRun.Outcome.ERROR
    assert recorded.summary == "ValueError: disk on fire"
    assert "Traceback" in recorded.error


def test_inline_tasks_record_runs(db, owner):
    ok_probe("inline", user_id=owner.pk)
    failing_probe()  # Huey logs the exception; the caller is not disturbed
    outcomes = dict(JobRun.objects.values_list("job", "outcome"))
    assert outcomes == {"test_ok_probe": "ok", "test_failing_probe": "error"}


def test_schedules_know_their_next_run():
    every_ten = Cron("every 10 minutes", minute="*/10")
    assert every_ten.next_after(datetime(2026, 11, 30, 13, 52, 30)) == datetime(2026, 11, 30, 14, 0)
    nightly = Cron("daily at 03:30", minute="30", hour="3")
    assert nightly.next_after(datetime(2026, 11, 30, 3, 30)) == datetime(2026, 12, 1, 3, 30)
    weekly = Cron("mondays 07:00", minute="0", hour="7", day_of_week="1")
    assert weekly.next_after(datetime(2026, 11, 30, 8, 0)) == datetime(2026, 12, 7, 7, 0)


def test_the_heartbeat_is_a_registered_periodic_job():
    assert REGISTRY["heartbeat"].schedule is not None
    assert REGISTRY["heartbeat"].next_run() > timezone.now()


def test_sync_status_lists_each_job_with_its_history(db):
    heartbeat()
    failing_probe()
    out = StringIO()
    call_command("sync_status", "--json", stdout=out)
    rows = {row["job"]: row for row in json.loads(out.getvalue())}
    assert rows["heartbeat"]["last_outcome"] == "ok"
    assert rows["heartbeat"]["last_success"] is not None
    assert rows["heartbeat"]["next_run"] is not None
    assert rows["prune"]["last_run"] is None  # scheduled, not yet run
    assert rows["test_failing_probe"]["last_error_summary"].startswith("ProbeFailure")

    text = StringIO()
    call_command("sync_status", stdout=text)
    assert "heartbeat  (every 10 minutes)" in text.getvalue()
    assert "next run:" in text.getvalue()


class TestJobsPage:
    def test_admins_see_every_job_and_run(self, client, admin, owner):
        ok_probe("for olivia", user_id=owner.pk)
        heartbeat()
        client.force_login(admin)
        html = client.get("/jobs/").content.decode()
        assert 'data-job="heartbeat"' in html
        assert 'data-job="prune"' in html
        assert "probe for olivia ran" in html
        assert "worker alive" in html

    def test_members_see_only_their_own_runs(self, client, owner, member):
        ok_probe("for olivia", user_id=owner.pk)
        ok_probe("for max", user_id=member.pk)
        heartbeat()
        client.force_login(member)
        html = client.get("/jobs/").content.decode()
        assert "probe for max ran" in html
        assert "probe for olivia ran" not in html
        assert "worker alive" not in html
        assert 'data-job="heartbeat"' not in html

    def test_an_empty_list_says_what_will_appear(self, client, owner):
        client.force_login(owner)
        assert b"No jobs have run yet" in client.get("/jobs/").content

    def test_anonymous_visitors_are_sent_to_sign_in(self, client, db):
        response = client.get("/jobs/")
        assert response.status_code == 302
        assert response["Location"].startswith("/accounts/login/")


@pytest.mark.django_db(transaction=True)
def test_a_real_consumer_records_a_failure_and_carries_on(owner):
    HUEY.immediate = False  # enqueue into the SQLite queue the consumer reads
    try:
        with huey_consumer() as worker:
            failing_probe()
            ok_probe("after the failure", user_id=owner.pk)
            heartbeat()
            finished = JobRun.objects.exclude(outcome="running")
            wait_until(lambda: finished.count() >= 3, timeout=60, process=worker)
    finally:
        HUEY.immediate = True
    runs = {run.job: run for run in JobRun.objects.all()}
    assert runs["test_failing_probe"].outcome == "error"
    assert "failed on purpose" in runs["test_failing_probe"].summary
    assert runs["test_ok_probe"].outcome == "ok"
    assert runs["test_ok_probe"].user == owner
    assert runs["heartbeat"].summary.startswith("worker alive (pid ")
