"""The drafts retention sweep."""

from __future__ import annotations

from apps.core.jobs import periodic_job
from apps.core.schedules import Cron
from apps.drafts.services import drafts_prune
from apps.instance.selectors import instance_settings


@periodic_job(
    name="draft_retention",
    title="Removing drafts nobody has touched for a while",
    schedule=Cron("daily at 04:10", minute="10", hour="4"),
)
def draft_retention() -> str:
    # Read at run time: an admin's change applies from the next sweep.
    days = instance_settings().drafts_retention_days
    if days == 0:
        return "retention is off (0 days)"
    removed = drafts_prune(days=days)
    if not removed:
        return f"no drafts untouched for {days} days"
    titles = ", ".join(f"“{title}”" for title in removed[:10])
    more = f" and {len(removed) - 10} more" if len(removed) > 10 else ""
    return f"removed {len(removed)} draft{'s' if len(removed) != 1 else ''}: {titles}{more}"
