"""JobRun: one recorded run of a background job; Notice: a message for one person (a toast)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone


class JobRun(models.Model):
    """One run of a background job: what ran, for whom, when, and how it ended.

    Written by `apps.core.jobs.job_run` around every worker job, so the Jobs
    page and `manage.py sync_status` can say what ran and what failed.
    """

    class Outcome(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        OK = "ok", "OK"
        ERROR = "error", "Error"

    job = models.CharField(max_length=100, db_index=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="job_runs",
    )
    # Set when a queued run was recorded (task.enqueue); started_at is when
    # the worker took it (for a queued run, when it was queued so far).
    queued_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(default=timezone.now, db_index=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    outcome = models.CharField(max_length=10, choices=Outcome.choices, default=Outcome.RUNNING)
    summary = models.CharField(max_length=500, blank=True)
    error = models.TextField(blank=True)
    detail = models.JSONField(default=dict, blank=True)
    # The process running it: a "running" row whose process is gone was
    # interrupted (apps.core.jobs.close_stale_runs).
    pid = models.IntegerField(null=True, blank=True)

    class Meta:
        ordering = ["-started_at", "-id"]
        indexes = [models.Index(fields=["job", "-started_at"])]

    def __str__(self) -> str:
        return f"{self.job} {self.started_at:%Y-%m-%d %H:%M} {self.outcome}"

    @property
    def duration_seconds(self) -> float | None:
        if self.finished_at is None:
            return None
        return (self.finished_at - self.started_at).total_seconds()

    @property
    def about(self) -> str:
        """What a queued or running run is about: its summary so far, else its title."""
        return self.summary or str((self.detail or {}).get("title", ""))

    @property
    def elapsed_seconds(self) -> float:
        """How long it has waited (queued) or run (running) so far."""
        since = self.queued_at if self.outcome == self.Outcome.QUEUED else self.started_at
        return max(0.0, (timezone.now() - (since or self.started_at)).total_seconds())


class Heartbeat(models.Model):
    """The latest sign of life of a background component ("worker"), written
    every JARVIS_HEARTBEAT_SECONDS by apps.core.heartbeat. One older than
    JARVIS_HEARTBEAT_STALE_SECONDS means the component is not running."""

    component = models.CharField(max_length=50, unique=True)
    beat_at = models.DateTimeField()
    pid = models.IntegerField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.component} {self.beat_at:%Y-%m-%d %H:%M:%S}"


class Notice(models.Model):
    """A short message for one person that the live socket shows as a toast
    on whatever page they have open ("report.pdf is ready to search").

    Written by the worker or the web process (apps.core.notices.notice_send);
    it reaches the person's open pages through the channel layer (or the
    socket's catch-up when written by the worker). It is a toast until seen;
    the header's bell lists those of the last day."""

    class Level(models.TextChoices):
        OK = "ok", "Done"
        ERROR = "error", "Problem"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notices"
    )
    text = models.CharField(max_length=500)
    level = models.CharField(max_length=5, choices=Level.choices, default=Level.OK)
    # A page of this site that says more (the document, the digest).
    url = models.CharField(max_length=500, blank=True)
    # What it is about, for grouping: notices of one kind that arrive close
    # together show as one toast ("3 files ready: a.pdf, b.docx, c.md"), named
    # by their subjects. A notice without a kind is always shown alone.
    kind = models.CharField(max_length=40, blank=True)
    subject = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    # Seen: dismissed by hand, gone by itself, or already shown by the page
    # that was open. A seen notice is not shown as a toast again (the bell lists it).
    dismissed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["user", "dismissed_at", "-created_at"])]

    def __str__(self) -> str:
        return f"{self.user_id}: {self.text}"
