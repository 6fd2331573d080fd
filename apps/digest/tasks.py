"""The digest's worker jobs.

- `digest` (hourly, minute 0): at the weekly slot (weekday and hour read from
  InstanceSettings at each tick, so an admin's change applies at once), queue
  a run for everyone whose digest is on.
- `digest_catch_up` (every 6 hours, minute 15; also `catch_up_all()` at worker
  start): queue a run for everyone whose last successful digest is older than
  the latest slot, e.g. because the machine was off across it. Without a
  successful digest there is no baseline, and nothing is caught up.
- `digest_run` (on demand): one person's run. Both the weekly run and the
  catch-up pass the slot, and a run first takes the person's claim and then
  checks whether that slot's digest already succeeded, so the two never make
  two digests for one slot.
"""

from __future__ import annotations

from datetime import datetime

from django.contrib.auth import get_user_model
from django.urls import reverse
from django.utils import timezone

from apps.core.jobs import on_demand_job, periodic_job
from apps.core.models import Notice
from apps.core.notices import notice_send
from apps.core.schedules import Cron
from apps.digest.models import Digest
from apps.digest.papers import DigestFailed
from apps.digest.services import digest_run, digests_due, digests_overdue
from apps.instance.selectors import instance_settings


def _when(text: str) -> datetime | None:
    return datetime.fromisoformat(text) if text else None


@on_demand_job(name="digest_run", title="Paper digest for one person")
def digest_run_task(user_id: int, *, run, trigger: str, slot: str = "", at: str = "") -> str:
    user = get_user_model().objects.filter(pk=user_id, is_active=True).first()
    if user is None:
        return f"user {user_id} is gone or disabled; no digest"
    when = _when(slot)
    try:
        result = digest_run(
            user=user, trigger=trigger, slot=when, now=_when(at), unless_done_since=when
        )
    except Exception as exc:
        # The JobRun records the failure; the person hears of it too.
        reason = str(exc) if isinstance(exc, DigestFailed) else "something unexpected went wrong"
        notice_send(
            user_id=user.pk,
            text=f"Your paper digest could not be made: {reason}.",
            level=Notice.Level.ERROR,
            url=reverse("digest:index"),
        )
        raise
    if not result.ran:
        return f"{user.username}: not run ({result.reason})"
    digest = result.digest
    notice_send(
        user_id=user.pk,
        text=f"Your paper digest is ready: {digest.title or 'this week’s papers'}.",
        url=reverse("digest:detail", args=[digest.pk]),
    )
    tiers = digest.stats.get("tiers", {})
    return (
        f"{user.username}: {digest.title}, {digest.stats.get('scored', 0)} scored "
        f"({tiers.get('must', 0)} must read, {tiers.get('worth', 0)} worth reading)"
        + (f", {len(digest.failed_batches)} batch(es) failed" if digest.failed_batches else "")
    )


def enqueue_run(
    user, *, trigger: str, slot: datetime | None = None, at: datetime | None = None
) -> object:
    """Queue one person's run (in tests, Huey's immediate mode runs it here)."""
    return digest_run_task(
        user.pk,
        user_id=user.pk,
        trigger=trigger,
        slot=slot.isoformat() if slot else "",
        at=at.isoformat() if at else "",
    )


def run_due(now: datetime | None = None) -> str:
    """The hourly tick: queue the slot's runs if `now` is in the weekly slot."""
    explicit = now
    if not instance_settings().digest_enabled:
        return "the paper digest is off for this instance"
    slot, users = digests_due(now or timezone.now())
    if slot is None:
        return "not the digest slot"
    for user in users:
        enqueue_run(user, trigger=Digest.Trigger.SCHEDULED, slot=slot, at=explicit)
    names = ", ".join(u.username for u in users) or "nobody"
    return f"weekly slot {timezone.localtime(slot):%a %H:%M}: queued digests for {names}"


def catch_up_all(now: datetime | None = None) -> str:
    """Queue a run for everyone who missed a slot since their last successful
    digest; the worker also calls this at start. Returns a summary line."""
    explicit = now
    if not instance_settings().digest_enabled:
        return "the paper digest is off for this instance"
    missed = digests_overdue(now or timezone.now())
    for user, slot in missed:
        enqueue_run(user, trigger=Digest.Trigger.CATCH_UP, slot=slot, at=explicit)
    if not missed:
        return "no digest to catch up"
    return "caught up digests for " + ", ".join(
        f"{user.username} (missed {timezone.localtime(slot):%Y-%m-%d %H:%M})"
        for user, slot in missed
    )


@periodic_job(
    name="digest",
    title="Weekly paper digest",
    schedule=Cron("hourly; runs at the weekly digest slot", minute="0"),
)
def digest_hourly() -> str:
    return run_due()


@periodic_job(
    name="digest_catch_up",
    title="Paper digest catch-up",
    schedule=Cron("every 6 hours at :15", minute="15", hour="*/6"),
    # Also queued when the worker starts: a slot missed while the machine was
    # off is caught up within minutes of it coming back, not hours.
    at_start=True,
)
def digest_catch_up() -> str:
    return catch_up_all()
