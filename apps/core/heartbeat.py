"""Liveness that tells the truth: the worker's heartbeat and its watchdog.

The worker runs a small thread (started when it starts) that writes a
Heartbeat row every JARVIS_HEARTBEAT_SECONDS and, on the same beat, marks
runs that passed their time limit as failed (apps.core.jobs.close_overrun_runs).
The web reads the row: a heartbeat older than JARVIS_HEARTBEAT_STALE_SECONDS,
or none at all, turns the header badge to "Background worker not running"
and makes /healthz answer 503 naming the component. A worker that stops
cleanly removes its row, so the badge changes at once.
"""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import close_old_connections, connection
from django.utils import timezone

from apps.core.jobs import close_overrun_runs
from apps.core.models import Heartbeat

logger = logging.getLogger(__name__)

WORKER = "worker"
COMPONENTS = (WORKER,)


@dataclass(frozen=True)
class Staleness:
    component: str
    last_beat: datetime | None

    def describe(self, now: datetime | None = None) -> str:
        if self.last_beat is None:
            return f"{self.component}: no heartbeat yet"
        age = ((now or timezone.now()) - self.last_beat).total_seconds()
        return f"{self.component}: last heartbeat {age:.0f} s ago"


def beat(component: str = WORKER, *, started_at: datetime | None = None) -> None:
    Heartbeat.objects.update_or_create(
        component=component,
        defaults={"beat_at": timezone.now(), "pid": os.getpid(), "started_at": started_at},
    )


def stale_components(now: datetime | None = None) -> list[Staleness]:
    """Every component whose heartbeat is missing or too old."""
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=settings.HEARTBEAT_STALE_SECONDS)
    beats = dict(
        Heartbeat.objects.filter(component__in=COMPONENTS).values_list("component", "beat_at")
    )
    return [
        Staleness(name, beats.get(name))
        for name in COMPONENTS
        if beats.get(name) is None or beats[name] < cutoff
    ]


def worker_running() -> bool:
    return not any(s.component == WORKER for s in stale_components())


class _Heart(threading.Thread):
    def __init__(self) -> None:
        super().__init__(name="jarvis-heartbeat", daemon=True)
        self.stopping = threading.Event()
        self.started_at = timezone.now()

    def run(self) -> None:
        while not self.stopping.is_set():
            try:
                close_old_connections()
                beat(WORKER, started_at=self.started_at)
                for run in close_overrun_runs():
                    logger.warning("job %s (run %s) ran past its time limit", run.job, run.pk)
            except Exception:  # a missed beat shows as stale; the next one tries again
                logger.exception("heartbeat failed")
            self.stopping.wait(settings.HEARTBEAT_SECONDS)
        connection.close()


_heart: _Heart | None = None
_lock = threading.Lock()


def heartbeat_start() -> None:
    global _heart
    with _lock:
        if _heart is None or not _heart.is_alive():
            _heart = _Heart()
            _heart.start()


def heartbeat_stop() -> None:
    """A clean stop: no more beats, and the row goes so the badge turns now."""
    global _heart
    with _lock:
        heart, _heart = _heart, None
    if heart is None:
        return
    heart.stopping.set()
    heart.join(timeout=5)
    Heartbeat.objects.filter(component=WORKER, pid=os.getpid()).delete()
