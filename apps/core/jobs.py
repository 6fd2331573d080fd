"""Background jobs: a registry, a JobRun recorder, and decorators for Huey tasks.

Every job runs inside `job_run`, which writes a JobRun before the work starts
and closes it with ok/error afterwards. A job that raises is recorded as failed
and the exception is re-raised to Huey, which logs it and carries on with the
next task: one failing job never stops the worker.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime

from django.utils import timezone
from huey.contrib.djhuey import db_periodic_task, db_task

from apps.core.models import JobRun
from apps.core.schedules import Cron

logger = logging.getLogger(__name__)

SUMMARY_MAX = 500


@dataclass(frozen=True)
class JobSpec:
    name: str
    title: str
    schedule: Cron | None = None  # None: runs on demand only

    def next_run(self, now: datetime | None = None) -> datetime | None:
        if self.schedule is None:
            return None
        local_now = timezone.localtime(now or timezone.now()).replace(tzinfo=None)
        naive = self.schedule.next_after(local_now)
        return timezone.make_aware(naive) if naive else None


REGISTRY: dict[str, JobSpec] = {}


def register(spec: JobSpec) -> JobSpec:
    REGISTRY[spec.name] = spec
    return spec


class RunRecorder:
    """Handed to the job body so it can set its one-line summary."""

    def __init__(self, run: JobRun) -> None:
        self.run = run
        self.summary = ""


@contextmanager
def job_run(name: str, *, user_id: int | None = None, **detail) -> Iterator[RunRecorder]:
    run = JobRun.objects.create(job=name, user_id=user_id, detail=detail)
    recorder = RunRecorder(run)
    try:
        yield recorder
    except Exception as exc:
        run.outcome = JobRun.Outcome.ERROR
        run.summary = _one_line(recorder.summary or f"{type(exc).__name__}: {exc}")
        run.error = "".join(traceback.format_exception(exc))
        run.finished_at = timezone.now()
        run.save(update_fields=["outcome", "summary", "error", "finished_at"])
        logger.exception("job %s failed (run %s)", name, run.pk)
        raise
    run.outcome = JobRun.Outcome.OK
    run.summary = _one_line(recorder.summary)
    run.finished_at = timezone.now()
    run.save(update_fields=["outcome", "summary", "finished_at"])


def _one_line(text: str) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= SUMMARY_MAX else line[: SUMMARY_MAX - 1] + "…"


def periodic_job(*, name: str, title: str, schedule: Cron):
    """Register a periodic job; the function returns its summary line."""

    def decorate(body: Callable[[], str | None]):
        register(JobSpec(name=name, title=title, schedule=schedule))

        @db_periodic_task(schedule.as_huey(), name=name)
        def task() -> None:
            with job_run(name) as run:
                run.summary = body() or ""

        task.body = body
        return task

    return decorate


def on_demand_job(*, name: str, title: str):
    """Register a job queued by the app (uploads, reindex). The body takes the
    task's arguments plus `run` (the RunRecorder) and returns its summary."""

    def decorate(body: Callable[..., str | None]):
        register(JobSpec(name=name, title=title))

        @db_task(name=name)
        def task(*args, user_id: int | None = None, **kwargs) -> None:
            with job_run(name, user_id=user_id, args=[str(a) for a in args]) as run:
                run.summary = body(*args, run=run, **kwargs) or ""

        task.body = body
        return task

    return decorate
