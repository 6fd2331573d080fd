"""Where a pending document stands in the worker's queue, in words a person
understands: "3rd in line; the worker is reading report.pdf".

The worker takes Huey tasks first in, first out, so the
documents waiting ahead of this one are the pending ones queued before it
(documents are numbered as they are added; a reprocessed one keeps its old
number, so its place is an estimate). What the worker does now is its running
JobRuns (it runs a few side by side). The name of a file being read is said
only to someone who may see that file; anyone else hears "someone else’s file".
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.utils import timezone

from apps.core.jobs import REGISTRY
from apps.core.models import JobRun
from apps.library.models import Document, Source
from apps.library.selectors import visible_to

# Sources whose documents are indexed one task each (folders are read by their sync job).
QUEUED_KINDS = (Source.Kind.UPLOADS, Source.Kind.PAPERS)
# A document pending this long while the worker runs nothing: say the worker may be down.
STALLED_AFTER = timedelta(minutes=2)


@dataclass(frozen=True)
class QueuePlace:
    position: int  # 1 = the next the worker takes
    working_on: str  # "reading “report.pdf”", "syncing note folders", "" when idle
    stalled: bool  # waited a while and the worker runs nothing

    @property
    def sentence(self) -> str:
        place = "Next in line" if self.position == 1 else f"{ordinal(self.position)} in line"
        if self.working_on:
            return f"{place}; the worker is {self.working_on}."
        if self.stalled:
            return (
                f"{place}, but the worker has not started anything for a while. "
                "If this stays, ask whoever looks after Jarvis to check that the worker is running."
            )
        return f"{place}; the worker will start on it in a moment."


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def queue_place_for(user, document: Document) -> QueuePlace:
    ahead = Document.objects.filter(
        status=Document.Status.PENDING, source__kind__in=QUEUED_KINDS, pk__lt=document.pk
    ).count()
    # The worker runs a few jobs side by side (JARVIS_WORKER_THREADS): name each.
    running = JobRun.objects.filter(outcome=JobRun.Outcome.RUNNING).order_by("started_at")[:3]
    doing = list(dict.fromkeys(_describe(user, run) for run in running))
    stalled = not doing and timezone.now() - document.updated_at > STALLED_AFTER
    return QueuePlace(position=ahead + 1, working_on=" and ".join(doing), stalled=stalled)


def _describe(user, run: JobRun) -> str:
    if run.job == "library_ingest":
        args = (run.detail or {}).get("args") or []
        document_id = int(args[0]) if args and str(args[0]).isdigit() else None
        reading = visible_to(user).filter(pk=document_id).first() if document_id else None
        if reading is None:
            return "reading someone else’s file"
        return f"reading “{reading.title or reading.path}”"
    spec = REGISTRY.get(run.job)
    if spec is None:
        return "busy with other work"
    return f"busy with “{spec.title}”"
