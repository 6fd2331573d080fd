"""The weekly slot and the catch-up rule, on a frozen clock."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.db import connection
from django.utils import timezone

from apps.core.models import JobRun
from apps.digest.models import Digest, DigestClaim
from apps.digest.schedule import current_slot, is_overdue, last_slot_before, next_slot_after
from apps.digest.services import digest_claim, digest_claim_release, digest_run
from apps.digest.tasks import catch_up_all, run_due
from tests.digest.conftest import NOW
from tests.fakes.llm import Reply

MONDAY_7 = datetime(2026, 3, 2, 7, 0, tzinfo=UTC)


# --- pure slot arithmetic


@pytest.mark.parametrize(
    ("now", "expected"),
    [
        (datetime(2026, 3, 2, 7, 0, tzinfo=UTC), MONDAY_7),  # exactly at the slot
        (datetime(2026, 3, 2, 6, 59, tzinfo=UTC), MONDAY_7 - timedelta(days=7)),
        (datetime(2026, 3, 5, 12, 0, tzinfo=UTC), MONDAY_7),  # Thursday
        (datetime(2026, 3, 8, 23, 59, tzinfo=UTC), MONDAY_7),  # Sunday night
    ],
)
def test_last_slot_before(now, expected):
    assert last_slot_before(now, 0, 7) == expected


def test_next_slot_after_is_strictly_later():
    assert next_slot_after(MONDAY_7, 0, 7) == MONDAY_7 + timedelta(days=7)
    assert next_slot_after(MONDAY_7 - timedelta(minutes=1), 0, 7) == MONDAY_7
    assert next_slot_after(MONDAY_7, 2, 18) == datetime(2026, 3, 4, 18, 0, tzinfo=UTC)


def test_the_slot_is_an_hour_long():
    assert current_slot(MONDAY_7 + timedelta(minutes=59), 0, 7) == MONDAY_7
    assert current_slot(MONDAY_7 + timedelta(minutes=60), 0, 7) is None
    assert current_slot(MONDAY_7 - timedelta(minutes=1), 0, 7) is None


def test_slots_are_in_the_given_time_zone():
    berlin = ZoneInfo("Europe/Berlin")
    now = datetime(2026, 3, 2, 7, 30, tzinfo=berlin)
    assert last_slot_before(now, 0, 7) == datetime(2026, 3, 2, 6, 0, tzinfo=UTC)
    # Across the spring change (29 March 2026): the wall-clock hour stays 07:00.
    later = datetime(2026, 3, 30, 7, 30, tzinfo=berlin)
    assert last_slot_before(later, 0, 7) == datetime(2026, 3, 30, 5, 0, tzinfo=UTC)


def test_overdue_needs_a_baseline_and_a_missed_slot():
    now = MONDAY_7 + timedelta(days=3)
    assert is_overdue(now, None, 0, 7) is None  # first start: wait for the next slot
    assert is_overdue(now, MONDAY_7 + timedelta(minutes=1), 0, 7) is None  # done this week
    assert is_overdue(now, MONDAY_7 - timedelta(days=1), 0, 7) == MONDAY_7  # missed
    # Missed three weeks: one catch-up, for the latest slot.
    assert is_overdue(now, MONDAY_7 - timedelta(days=21), 0, 7) == MONDAY_7


def test_naive_clocks_are_refused():
    with pytest.raises(ValueError):
        last_slot_before(datetime(2026, 3, 2, 7), 0, 7)


# --- the jobs, with the real pipeline behind them


def past_digest(user, *, started: datetime, status=Digest.Status.OK) -> Digest:
    return Digest.objects.create(owner=user, trigger="scheduled", started_at=started, status=status)


@pytest.fixture
def ready(reader, fake_arxiv, fake_biorxiv, llm):
    return reader


@pytest.mark.django_db
def test_a_missed_slot_is_caught_up_once(ready):
    past_digest(ready, started=MONDAY_7 - timedelta(days=7, minutes=-1))  # last week's
    later = MONDAY_7 + timedelta(hours=5)  # the machine came back at noon

    summary = catch_up_all(now=later)

    assert "olivia" in summary and "2026-03-02 07:00" in summary
    made = Digest.objects.filter(owner=ready).exclude(pk__in=[]).order_by("-started_at").first()
    assert made.trigger == Digest.Trigger.CATCH_UP and made.status == Digest.Status.OK
    assert made.slot == MONDAY_7
    assert Digest.objects.filter(owner=ready, status=Digest.Status.OK).count() == 2
    # Six hours later the catch-up finds nothing to do.
    assert catch_up_all(now=later + timedelta(hours=6)) == "no digest to catch up"
    assert Digest.objects.filter(owner=ready).count() == 2


@pytest.mark.django_db
def test_no_baseline_means_no_catch_up(ready, llm):
    assert catch_up_all(now=MONDAY_7 + timedelta(days=2)) == "no digest to catch up"
    assert not Digest.objects.exists()
    assert llm.chat_requests == []


@pytest.mark.django_db
def test_a_failed_digest_is_not_a_baseline_but_is_retried(ready, fake_arxiv):
    past_digest(ready, started=MONDAY_7 - timedelta(days=7, minutes=-1))
    past_digest(ready, started=MONDAY_7 + timedelta(minutes=1), status=Digest.Status.FAILED)
    catch_up_all(now=MONDAY_7 + timedelta(hours=6))
    assert Digest.objects.filter(owner=ready, status=Digest.Status.OK).count() == 2


@pytest.mark.django_db
def test_the_hourly_job_runs_only_in_the_slot(ready, settings):
    assert "not the digest slot" in run_due(now=MONDAY_7 - timedelta(minutes=1))
    assert "not the digest slot" in run_due(now=MONDAY_7 + timedelta(hours=1))
    assert not Digest.objects.exists()

    summary = run_due(now=NOW)
    assert "queued digests for olivia" in summary
    digest = Digest.objects.get(owner=ready)
    assert digest.trigger == Digest.Trigger.SCHEDULED and digest.slot == MONDAY_7
    assert digest.status == Digest.Status.OK
    # Its job run is recorded for the person (the Jobs page shows it to them).
    run = JobRun.objects.get(job="digest_run")
    assert run.user_id == ready.pk and run.outcome == JobRun.Outcome.OK

    # Huey firing twice in the slot, then the catch-up: still one digest.
    run_due(now=NOW + timedelta(minutes=10))
    catch_up_all(now=NOW + timedelta(hours=5))
    assert Digest.objects.filter(owner=ready).count() == 1


@pytest.mark.django_db
def test_the_slot_is_read_from_instance_settings_at_run_time(ready, digest_on):
    digest_on.digest_weekday, digest_on.digest_hour = 2, 18
    digest_on.save()
    assert "not the digest slot" in run_due(now=NOW)
    wednesday = datetime(2026, 3, 4, 18, 20, tzinfo=UTC)
    assert "olivia" in run_due(now=wednesday)


@pytest.mark.django_db
def test_nothing_runs_while_the_instance_switch_is_off(ready, digest_on):
    digest_on.digest_enabled = False
    digest_on.save()
    past_digest(ready, started=MONDAY_7 - timedelta(days=30))
    assert run_due(now=NOW) == "the paper digest is off for this instance"
    assert catch_up_all(now=NOW) == "the paper digest is off for this instance"
    assert Digest.objects.count() == 1


@pytest.mark.django_db
def test_a_run_holding_the_claim_stops_the_catch_up(ready):
    past_digest(ready, started=MONDAY_7 - timedelta(days=7, minutes=-1))
    token = digest_claim(user=ready, trigger="scheduled")  # the weekly run is under way
    assert token

    catch_up_all(now=MONDAY_7 + timedelta(minutes=30))
    assert Digest.objects.filter(owner=ready).count() == 1
    run = JobRun.objects.get(job="digest_run")
    assert "another digest run" in run.summary

    digest_claim_release(user=ready, token=token)
    assert digest_claim(user=ready, trigger="x") is not None


@pytest.mark.django_db
def test_a_stale_claim_from_a_dead_worker_is_taken_over(ready, settings):
    past_digest(ready, started=MONDAY_7 - timedelta(days=7, minutes=-1))
    interrupted = past_digest(ready, started=MONDAY_7, status=Digest.Status.RUNNING)
    token = digest_claim(user=ready, trigger="scheduled")
    stale = timezone.now() - timedelta(minutes=settings.DIGEST_CLAIM_STALE_MINUTES + 1)
    DigestClaim.objects.filter(user=ready).update(claimed_at=stale)

    catch_up_all(now=MONDAY_7 + timedelta(hours=6))

    interrupted.refresh_from_db()
    assert interrupted.status == Digest.Status.FAILED and "interrupted" in interrupted.error
    assert Digest.objects.filter(owner=ready, status=Digest.Status.OK).count() == 2
    digest_claim_release(user=ready, token=token)  # the dead run's token no longer matches: a no-op
    assert DigestClaim.objects.get(user=ready).claimed_at is None


@pytest.mark.django_db(transaction=True)
def test_the_weekly_run_and_the_catch_up_racing_make_one_digest(ready, llm):
    """Two threads (two connections, like two worker threads) start the same
    slot's digest at the same moment; the scoring model is slow, so the first
    still holds the claim when the second asks."""
    past_digest(ready, started=MONDAY_7 - timedelta(days=7, minutes=-1))
    scorer = llm.default
    llm.default = lambda request: Reply(text=scorer(request).text, first_token_delay=0.4)
    results: dict[str, object] = {}
    barrier = threading.Barrier(2)

    def start(trigger: str) -> None:
        try:
            barrier.wait()
            results[trigger] = digest_run(
                user=ready, trigger=trigger, slot=MONDAY_7, now=NOW, unless_done_since=MONDAY_7
            )
        except Exception as exc:  # reported by the assertion below
            results[trigger] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=start, args=(t,)) for t in ("scheduled", "catch-up")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)

    ran = [r for r in results.values() if getattr(r, "ran", False)]
    skipped = [r for r in results.values() if getattr(r, "ran", None) is False]
    assert len(ran) == 1 and len(skipped) == 1, results
    assert "in progress" in skipped[0].reason
    assert Digest.objects.filter(owner=ready, slot=MONDAY_7).count() == 1
    # Whichever comes after the winner finished does nothing either.
    late = digest_run(
        user=ready, trigger="catch-up", slot=MONDAY_7, now=NOW, unless_done_since=MONDAY_7
    )
    assert not late.ran and "already done" in late.reason
