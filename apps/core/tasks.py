"""Housekeeping jobs of the worker itself, and what it does as it starts and stops."""

from __future__ import annotations

import logging
import os
import threading
from datetime import timedelta

from django.conf import settings
from django.utils import timezone
from huey.contrib.djhuey import HUEY

from apps.core.heartbeat import heartbeat_start, heartbeat_stop
from apps.core.jobs import (
    REGISTRY,
    WORKER_START_HOOKS,
    close_lost_runs,
    close_stale_runs,
    periodic_job,
    run_now,
)
from apps.core.models import JobRun
from apps.core.sandbox import SandboxUnavailable, sandbox_warm_up
from apps.core.schedules import Cron

logger = logging.getLogger(__name__)

_start_lock = threading.Lock()
_started = False


@HUEY.on_startup()
def worker_started() -> None:
    """Once per worker process (Huey calls this in each worker thread; the
    others wait on the lock until it is done, so none takes a task before
    recovery has run): close runs a killed worker left "running" and queued
    runs the queue lost, let the apps recover their work (re-queue documents
    left half-done), start the heartbeat and warm the parser sandbox, then queue the jobs
    that also run at start (a sync, the digest catch-up)."""
    global _started
    with _start_lock:
        if _started:
            return
        _started = True
        closed = close_stale_runs()
        if closed:
            logger.warning("closed %s job runs left running by a stopped worker", closed)
        lost = close_lost_runs()
        if lost:
            logger.warning("closed %s queued job runs the queue no longer held", lost)
        for hook in WORKER_START_HOOKS:
            try:
                hook()
            except Exception:  # one app's recovery failing must not stop the worker
                logger.exception("worker start hook %s failed", hook.__name__)
        heartbeat_start()
        # In the background: tasks that parse nothing need not wait for it.
        threading.Thread(target=_warm_sandbox, name="sandbox-warm-up", daemon=True).start()
        for spec in REGISTRY.values():
            if spec.at_start:
                run_now(spec.name)


def _warm_sandbox() -> None:
    try:
        sandbox_warm_up()
    except SandboxUnavailable:
        logger.exception("the parser sandbox did not start; the first parse tries again")


@HUEY.on_shutdown()
def worker_stopping() -> None:
    heartbeat_stop()


@periodic_job(
    name="heartbeat",
    title="Checking the worker is running",
    schedule=Cron("every 10 minutes", minute="*/10"),
)
def heartbeat() -> str:
    # The liveness signal is apps.core.heartbeat's thread; this run shows on
    # the Jobs page that the worker also takes tasks from its queue.
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
        .exclude(outcome__in=[JobRun.Outcome.RUNNING, JobRun.Outcome.QUEUED])
        .delete()
    )
    return f"removed {runs} old job runs"
