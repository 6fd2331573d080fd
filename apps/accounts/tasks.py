"""The accounts app's periodic housekeeping."""

from __future__ import annotations

from django.contrib.sessions.models import Session
from django.utils import timezone

from apps.accounts.services import login_failures_prune
from apps.core.jobs import periodic_job
from apps.core.schedules import Cron


@periodic_job(
    name="prune_sign_ins",
    title="Clearing expired sign-ins",
    schedule=Cron("daily at 03:35", minute="35", hour="3"),
)
def prune_sign_ins() -> str:
    sessions, _ = Session.objects.filter(expire_date__lt=timezone.now()).delete()
    failures = login_failures_prune()
    return f"removed {sessions} expired sessions, {failures} sign-in failures"
