"""Background jobs: a registry, a JobRun recorder, and decorators for Huey tasks.

Every job runs inside `job_run`, which writes a JobRun before the work starts
and closes it with ok/error afterwards. A job that raises is recorded as failed
and the exception is re-raised to Huey, which logs it and carries on with the
next task: one failing job never stops the worker.

An on-demand job queued with `task.enqueue(...)` gets its JobRun at once, as
"queued", so people see what waits (the Jobs page) and a queued run can be
cancelled (its row marked failed; the task then skips). A running job may
`defer` itself (back to queued, run again later, e.g. in another lane). A
run still going after JARVIS_JOB_TIME_LIMIT_MINUTES is marked failed by the
worker's watchdog (apps.core.heartbeat), and its job's `on_overrun` hook
abandons the work it was doing.

Two runs of one periodic job never overlap: each takes a Huey lock named for
the job, and a second run that finds it taken is skipped (logged, no JobRun).
A worker killed mid-job leaves its lock behind, so the worker always starts
with `--flush-locks` (WORKER_COMMAND); there is one worker process.
"""

from __future__ import annotations

import logging
import os
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone
from huey.contrib.djhuey import HUEY, db_periodic_task, db_task
from huey.exceptions import TaskLockedException

from apps.core.models import JobRun
from apps.core.schedules import Schedule

# How every process that starts the worker starts it (serve, systemd, tests).
WORKER_COMMAND = ["run_huey", "--flush-locks"]

logger = logging.getLogger(__name__)

SUMMARY_MAX = 500


@dataclass(frozen=True)
class JobSpec:
    name: str
    # What the job does, as a household member reads it on the Jobs page:
    # a sentence ("Syncing your notes"), never the code name.
    title: str
    schedule: Schedule | None = None  # None: runs on demand only
    at_start: bool = False  # also queued once each time the worker starts
    # Called (in the worker) with a run marked failed for running too long.
    on_overrun: Callable[[JobRun], None] | None = None
    # False for work whose length grows with the library and that shows its
    # progress (a reindex): the watchdog leaves it alone.
    time_limited: bool = True
    # The sentence for a run about one thing, "Reading {subject}", where the
    # run recorded what its subject is called (on_demand_job's `subject`).
    title_of_one: str = ""

    def next_run(self, now: datetime | None = None) -> datetime | None:
        if self.schedule is None:
            return None
        local_now = timezone.localtime(now or timezone.now()).replace(tzinfo=None)
        naive = self.schedule.next_after(local_now)
        return timezone.make_aware(naive) if naive else None


REGISTRY: dict[str, JobSpec] = {}
# Run once as the worker starts, before it takes any task (apps recover their
# half-done work here: the library re-queues documents a killed worker left).
WORKER_START_HOOKS: list[Callable[[], None]] = []


def on_worker_start(hook: Callable[[], None]) -> Callable[[], None]:
    WORKER_START_HOOKS.append(hook)
    return hook


# The Huey task of each periodic job, for "run now" and the worker's start.
PERIODIC_TASKS: dict[str, Callable] = {}


def register(spec: JobSpec) -> JobSpec:
    REGISTRY[spec.name] = spec
    return spec


def run_title(run: JobRun) -> str:
    """The sentence a person reads for a run ("Reading report.pdf", "Syncing
    your notes"): the one place a job's code name becomes words."""
    spec = REGISTRY.get(run.job)
    if spec is None:  # a job since renamed or removed: its name, made readable
        return run.job.replace("_", " ").capitalize()
    subject = (run.detail or {}).get("subject")
    if subject and spec.title_of_one:
        return spec.title_of_one.format(subject=subject)
    return spec.title


class RunRecorder:
    """Handed to the job body so it can set its one-line summary, report
    progress while it runs (shown on the Jobs page, which polls), ask to be
    run again later (`defer`), or mark the run failed when the work failed
    without raising (a file that could not be read is a handled outcome, but
    not an "ok" one)."""

    PROGRESS_EVERY = 2.0  # seconds between progress writes

    def __init__(self, run: JobRun) -> None:
        self.run = run
        self.summary = ""
        self.failed = False
        self.deferred: dict | None = None
        self._reported = 0.0

    def fail(self, summary: str) -> str:
        """Record the run as failed with `summary`; returns it, so a body can
        `return run.fail("…")`."""
        self.failed = True
        self.summary = summary
        return summary

    def defer(self, *, delay: float = 0, **changes) -> None:
        """Put this run back in the queue when the body returns: the task runs
        again after `delay` seconds with its keyword arguments updated by
        `changes`. The summary says why it waits."""
        self.deferred = {"delay": delay, "changes": changes}

    def progress(self, text: str, *, force: bool = False) -> None:
        """Show `text` as the running job's summary (at most every few seconds)."""
        now = time.monotonic()
        if not force and now - self._reported < self.PROGRESS_EVERY:
            return
        self._reported = now
        JobRun.objects.filter(pk=self.run.pk).update(summary=_one_line(text))


@contextmanager
def job_run(
    name: str, *, user_id: int | None = None, run_id: int | None = None, **detail
) -> Iterator[RunRecorder | None]:
    """Record a run around the body. With `run_id` (a queued run) the row is
    taken over; None is yielded if it was cancelled while it waited."""
    if run_id is not None:
        run = _start_queued(run_id)
        if run is None:
            yield None
            return
    else:
        run = JobRun.objects.create(job=name, user_id=user_id, detail=detail, pid=os.getpid())
    recorder = RunRecorder(run)
    try:
        yield recorder
    except Exception as exc:
        _finish(
            run,
            outcome=JobRun.Outcome.ERROR,
            summary=recorder.summary or f"{type(exc).__name__}: {exc}",
            error="".join(traceback.format_exception(exc)),
        )
        logger.exception("job %s failed (run %s)", name, run.pk)
        raise
    if recorder.deferred is not None:
        JobRun.objects.filter(pk=run.pk, outcome=JobRun.Outcome.RUNNING).update(
            outcome=JobRun.Outcome.QUEUED, summary=_one_line(recorder.summary), pid=None
        )
        return
    outcome = JobRun.Outcome.ERROR if recorder.failed else JobRun.Outcome.OK
    _finish(run, outcome=outcome, summary=recorder.summary)


def _start_queued(run_id: int) -> JobRun | None:
    now = timezone.now()
    started = JobRun.objects.filter(pk=run_id, outcome=JobRun.Outcome.QUEUED).update(
        outcome=JobRun.Outcome.RUNNING, started_at=now, pid=os.getpid()
    )
    return JobRun.objects.get(pk=run_id) if started else None


def _finish(run: JobRun, *, outcome: str, summary: str, error: str = "") -> None:
    # Only a run still marked running is closed here: the watchdog may have
    # failed it meanwhile (too long), and that verdict stands.
    JobRun.objects.filter(pk=run.pk, outcome=JobRun.Outcome.RUNNING).update(
        outcome=outcome, summary=_one_line(summary), error=error, finished_at=timezone.now()
    )


def _subject_of(subject, args: tuple, kwargs: dict) -> str:
    if subject is None:
        return ""
    try:
        return _one_line(subject(*args, **kwargs) or "")[:200]
    except Exception:
        # Naming the run is a courtesy: the job runs (and says what went
        # wrong) even when its subject cannot be looked up.
        logger.exception("could not name the subject of a run")
        return ""


def _one_line(text: str) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= SUMMARY_MAX else line[: SUMMARY_MAX - 1] + "…"


def periodic_job(*, name: str, title: str, schedule: Schedule, at_start: bool = False):
    """Register a periodic job; the function returns its summary line."""

    def decorate(body: Callable[[], str | None]):
        register(JobSpec(name=name, title=title, schedule=schedule, at_start=at_start))
        # Made here, not per run: Huey's --flush-locks clears only the locks
        # this process has created by the time the consumer starts.
        lock = HUEY.lock_task(name)

        @db_periodic_task(schedule.as_huey(), name=name)
        def task() -> None:
            try:
                with lock, job_run(name) as run:
                    run.summary = body() or ""
            except TaskLockedException:
                logger.info("job %s is already running; this run is skipped", name)

        task.body = body
        PERIODIC_TASKS[name] = task
        return task

    return decorate


def run_now(name: str) -> bool:
    """Queue a periodic job to run as soon as the worker is free (admins'
    "run now"). False if there is no such periodic job."""
    task = PERIODIC_TASKS.get(name)
    if task is None:
        return False
    task()
    return True


def close_stale_runs() -> int:
    """Runs left "running" by a process that no longer exists (a killed
    worker) are closed as interrupted, so the Jobs page does not show them
    running forever. Called as the worker starts, when none of the rows can
    be its own (a reused pid is stale too). Returns how many. Queued runs
    whose task the queue no longer holds are `close_lost_runs`' business."""
    stale = []
    for run in JobRun.objects.filter(outcome=JobRun.Outcome.RUNNING):
        if run.pid and run.pid != os.getpid() and _alive(run.pid):
            continue
        stale.append(run.pk)
    JobRun.objects.filter(pk__in=stale).update(
        outcome=JobRun.Outcome.ERROR,
        summary="interrupted: the worker stopped while this ran",
        finished_at=timezone.now(),
    )
    return len(stale)


def close_lost_runs() -> int:
    """Queued runs whose task is no longer in Huey's queue or schedule (the
    queue file was replaced, a task was lost) are closed, so nothing waits
    for them. Called as the worker starts, before its threads take tasks."""
    waiting = {
        task.kwargs.get("run_id")
        for task in [*HUEY.pending(), *HUEY.scheduled()]
        if isinstance(task.kwargs, dict) and task.kwargs.get("run_id") is not None
    }
    lost = JobRun.objects.filter(outcome=JobRun.Outcome.QUEUED).exclude(pk__in=waiting)
    return lost.update(
        outcome=JobRun.Outcome.ERROR,
        summary="lost: the queue no longer held this job",
        finished_at=timezone.now(),
    )


def close_overrun_runs() -> list[JobRun]:
    """Runs still going after their time limit are marked failed, and their
    job's `on_overrun` hook abandons what they were doing. Returns them."""
    limit = timezone.now() - timedelta(minutes=settings.JOB_TIME_LIMIT_MINUTES)
    overrun = list(JobRun.objects.filter(outcome=JobRun.Outcome.RUNNING, started_at__lt=limit))
    closed = []
    for run in overrun:
        spec = REGISTRY.get(run.job)
        if spec is not None and not spec.time_limited:
            continue
        marked = JobRun.objects.filter(pk=run.pk, outcome=JobRun.Outcome.RUNNING).update(
            outcome=JobRun.Outcome.ERROR,
            summary=f"stopped: ran longer than its {settings.JOB_TIME_LIMIT_MINUTES}-minute limit "
            "(JARVIS_JOB_TIME_LIMIT_MINUTES)",
            finished_at=timezone.now(),
        )
        if not marked:
            continue
        closed.append(run)
        if spec is not None and spec.on_overrun is not None:
            try:
                spec.on_overrun(run)
            except Exception:  # one hook failing must not stop the watchdog
                logger.exception("overrun hook of %s failed (run %s)", run.job, run.pk)
    return closed


def cancel_queued(run_ids) -> int:
    """Mark queued runs cancelled: their tasks skip when the worker reaches them."""
    return JobRun.objects.filter(pk__in=list(run_ids), outcome=JobRun.Outcome.QUEUED).update(
        outcome=JobRun.Outcome.ERROR, summary="cancelled", finished_at=timezone.now()
    )


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def on_demand_job(
    *,
    name: str,
    title: str,
    title_of_one: str = "",
    subject: Callable[..., str | None] | None = None,
    on_overrun: Callable[[JobRun], None] | None = None,
    time_limited: bool = True,
):
    """Register a job queued by the app (uploads, reindex). The body takes the
    task's arguments plus `run` (the RunRecorder) and returns its summary.

    `task(*args, user_id=…, **kwargs)` queues it the plain Huey way (its run
    is recorded when it starts); `task.enqueue(...)` records it as queued
    right away and returns that JobRun.

    `subject`, given the task's arguments, names what the run is about (a
    file name) for `title_of_one`; it is recorded with the run (when queued,
    or as it starts), so the Jobs page reads it without a query per row."""

    def decorate(body: Callable[..., str | None]):
        register(
            JobSpec(
                name=name,
                title=title,
                title_of_one=title_of_one,
                on_overrun=on_overrun,
                time_limited=time_limited,
            )
        )

        def run_detail(args: tuple, kwargs: dict) -> dict:
            detail: dict = {"args": [str(a) for a in args]}
            named = _subject_of(subject, args, kwargs)
            if named:
                detail["subject"] = named
            return detail

        @db_task(name=name)
        def task(*args, user_id: int | None = None, run_id: int | None = None, **kwargs) -> None:
            detail = run_detail(args, kwargs) if run_id is None else {}
            with job_run(name, user_id=user_id, run_id=run_id, **detail) as run:
                if run is None:
                    return  # cancelled while it waited
                run.summary = body(*args, run=run, **kwargs) or ""
            if run.deferred is not None:
                kwargs.update(run.deferred["changes"])
                _schedule(task, args, kwargs, user_id, run.run.pk, delay=run.deferred["delay"])

        def enqueue(
            *args, user_id: int | None = None, detail: dict | None = None, priority=None, **kwargs
        ) -> JobRun:
            run = JobRun.objects.create(
                job=name,
                user_id=user_id,
                outcome=JobRun.Outcome.QUEUED,
                queued_at=timezone.now(),
                detail={**run_detail(args, kwargs), **(detail or {})},
            )
            _schedule(task, args, kwargs, user_id, run.pk, priority=priority)
            return run

        task.body = body
        task.enqueue = enqueue
        return task

    return decorate


def _schedule(task, args, kwargs, user_id, run_id, *, delay: float = 0, priority=None) -> None:
    kwargs = {**kwargs, "user_id": user_id, "run_id": run_id}
    if delay:
        task.schedule(args=args, kwargs=kwargs, delay=delay, priority=priority)
    else:
        task(*args, priority=priority, **kwargs)
