"""Reads about background jobs, scoped to the person asking."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import QuerySet

from apps.core.jobs import REGISTRY, JobSpec
from apps.core.models import JobRun


@dataclass
class JobStatus:
    name: str
    title: str
    schedule: str
    last_run: JobRun | None
    last_success: JobRun | None
    last_error: JobRun | None
    next_run: datetime | None
    periodic: bool = False

    @property
    def running(self) -> bool:
        return self.last_run is not None and self.last_run.outcome == JobRun.Outcome.RUNNING


def job_runs_for(*, user) -> QuerySet[JobRun]:
    """Admins see every run; everyone else sees the runs they started."""
    runs = JobRun.objects.select_related("user")
    return runs if user.is_staff else runs.filter(user=user)


def work_in_flight_for(*, user) -> list[JobRun]:
    """What is queued or running, oldest first: a person's own, or everyone's for admins."""
    active = [JobRun.Outcome.RUNNING, JobRun.Outcome.QUEUED]
    return list(job_runs_for(user=user).filter(outcome__in=active).order_by("started_at", "pk"))


def job_statuses_for(*, user) -> list[JobStatus]:
    runs = job_runs_for(user=user)
    names = set(runs.values_list("job", flat=True).distinct())
    if user.is_staff:
        names |= set(REGISTRY)
    statuses = []
    for name in sorted(names, key=lambda n: (REGISTRY.get(n) is None, n)):
        spec = REGISTRY.get(name, JobSpec(name=name, title=name))
        of_job = runs.filter(job=name)
        statuses.append(
            JobStatus(
                name=name,
                title=spec.title,
                schedule=spec.schedule.description if spec.schedule else "on demand",
                last_run=of_job.first(),
                last_success=of_job.filter(outcome=JobRun.Outcome.OK).first(),
                last_error=of_job.filter(outcome=JobRun.Outcome.ERROR).first(),
                next_run=spec.next_run(),
                periodic=spec.schedule is not None,
            )
        )
    return statuses
