"""Housekeeping jobs of the worker itself."""

from __future__ import annotations

import logging
import os
import threading
from datetime import timedelta

from django.conf import settings
from django.utils import timezone
from huey.contrib.djhuey import HUEY

from apps.core.jobs import REGISTRY, close_stale_runs, periodic_job, run_now
from apps.core.models import JobRun
from apps.core.schedules import Cron

logger = logging.getLogger(__name__)

_start_lock = threading.Lock()
_started = False


@HUEY.on_startup()
def worker_started() -> None:
    """Once per worker process (Huey calls this in each worker thread): close
    runs a killed worker left "running", then queue the jobs that also run at
    start (a sync, the digest catch-up)."""
    global _started
    with _start_lock:
        if _started:
            return
        _started = True
    closed = close_stale_runs()
    if closed:
        logger.warning("closed %s job runs left running by a stopped worker", closed)
    for spec in REGISTRY.values():
        if spec.at_start:
            run_now(spec.name)


@periodic_job(
    name="heartbeat",
    title="Checking the worker is running",
    schedule=Cron("every 10 minutes", minute="*/10"),
)
def heartbeat() -> str:
    # A recent successful heartbeat on the Jobs page is how a person sees the
    # worker is alive without a shell.
    return f"worker alive (pid {os.getpid()})"


@periodic_job(
    name="prune",
    title="Clearing old job records",
    schedule=Cron("daily at 03:30", minute="30", hour="3"),
)
def prune() -> str:
    cutoff = timezone.now() - timedelta(days=settings.JOB_RUNS_KEEP_DAYS)
    runs, _ = (
        JobRun.objects.filter(started_at__lt=cutoff)
        .exclude(outcome=JobRun.Outcome.RUNNING)
        .delete()
    )
    return f"removed {runs} old job runs"
