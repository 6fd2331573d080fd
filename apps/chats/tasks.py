"""The chats app's periodic housekeeping."""

from __future__ import annotations

from apps.accounts.models import User
from apps.chats.services import chats_prune
from apps.core.jobs import periodic_job
from apps.core.schedules import Cron


@periodic_job(
    name="chats_prune",
    title="Removing chats beyond each person's limit",
    schedule=Cron("daily at 03:40", minute="40", hour="3"),
)
def chats_prune_all() -> str:
    # New chats prune their owner's list at once; this catches a lowered limit.
    removed = sum(
        chats_prune(owner=user) for user in User.objects.filter(chats__isnull=False).distinct()
    )
    return f"removed {removed} old chats"
