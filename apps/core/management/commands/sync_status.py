"""manage.py sync_status: what the worker ran, when, and what failed."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandParser
from django.utils import timezone

from apps.core.selectors import JobStatus, job_statuses_for


class _Everyone:
    """The CLI is the server's operator: it sees every job, like an admin."""

    is_staff = True
    is_authenticated = True


def _when(moment) -> str:
    return timezone.localtime(moment).strftime("%Y-%m-%d %H:%M") if moment else "-"


def _as_dict(status: JobStatus) -> dict:
    return {
        "job": status.name,
        "title": status.title,
        "schedule": status.schedule,
        "running": status.running,
        "last_run": _when(status.last_run.started_at) if status.last_run else None,
        "last_outcome": status.last_run.outcome if status.last_run else None,
        "last_success": _when(status.last_success.started_at) if status.last_success else None,
        "last_error": _when(status.last_error.started_at) if status.last_error else None,
        "last_error_summary": status.last_error.summary if status.last_error else None,
        "next_run": _when(status.next_run) if status.next_run else None,
    }


class Command(BaseCommand):
    help = "Show each background job with its last run, last success, last error and next run."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **options) -> None:
        rows = [_as_dict(s) for s in job_statuses_for(user=_Everyone())]
        if options["json"]:
            self.stdout.write(json.dumps(rows, indent=2))
            return
        for row in rows:
            self.stdout.write(f"{row['job']}  ({row['schedule']})")
            last = f"{row['last_run']} {row['last_outcome']}" if row["last_run"] else "never"
            self.stdout.write(f"  last run:     {last}")
            self.stdout.write(f"  last success: {row['last_success'] or '-'}")
            error = row["last_error"] or "-"
            if row["last_error_summary"]:
                error += f"  {row['last_error_summary']}"
            self.stdout.write(f"  last error:   {error}")
            self.stdout.write(f"  next run:     {row['next_run'] or 'on demand'}")
