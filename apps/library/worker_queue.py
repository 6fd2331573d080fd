"""Where a pending document stands in the worker's queue, in words a person
understands: "3rd in line; the worker is reading report.pdf".

The worker takes Huey tasks first in, first out, so the
documents waiting ahead of this one are the pending ones queued before it
(documents are numbered as they are added; a reprocessed one keeps its old
number, so its place is an estimate). Every place comes from one ordered list
of the waiting documents (`waiting_order`), read once per answer, so no two
rows share a place and none is skipped. What the worker does now is its running
JobRuns (it runs a few side by side); when the header says the worker is not
running, the sentence says so too instead of promising a start. The name of
a file being read is said only to someone who may see that file; anyone else
hears "someone else’s file".
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.utils import timezone

from apps.core.heartbeat import worker_running
from apps.core.jobs import REGISTRY
from apps.core.models import JobRun
from apps.library.models import Document
from apps.library.selectors import visible_to

# A document pending this long while the worker runs nothing: say the worker may be down.
STALLED_AFTER = timedelta(minutes=2)


@dataclass(frozen=True)
class QueuePlace:
    position: int  # 1 = the next the worker takes
    working_on: str  # "reading “report.pdf”", "syncing note folders", "" when idle
    stalled: bool  # waited a while and the worker runs nothing
    worker_down: bool = False  # its heartbeat is stale: the header says "not running"

    @property
    def sentence(self) -> str:
        place = "Next in line" if self.position == 1 else f"{ordinal(self.position)} in line"
        if self.worker_down:
            return (
                f"{place}; the background worker is not running, so it waits until "
                "the worker starts again."
            )
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


def waiting_order() -> list[int]:
    """The waiting documents' ids in the order the worker takes them: one query.
    Every waiting document is in it (an upload, a paper, or a folder file a sync
    left to the long lane), so the places it gives run 1, 2, 3… without a gap."""
    return list(
        Document.objects.filter(status=Document.Status.PENDING)
        .order_by("pk")
        .values_list("pk", flat=True)
    )


def queue_places(user, documents) -> dict[int, QueuePlace]:
    """The place of each waiting document in `documents`, all from one reading
    of the queue (and one of what the worker is doing)."""
    waiting = [d for d in documents if d.status == Document.Status.PENDING]
    if not waiting:
        return {}
    order = {pk: n for n, pk in enumerate(waiting_order(), start=1)}
    down = not worker_running()
    # The worker runs a few jobs side by side (JARVIS_WORKER_THREADS): name each.
    running = JobRun.objects.filter(outcome=JobRun.Outcome.RUNNING).order_by("started_at")[:3]
    doing = " and ".join(dict.fromkeys(_describe(user, run) for run in running))
    now = timezone.now()
    return {
        d.pk: QueuePlace(
            # Not in the list: it stopped waiting since this page was read; it is next.
            position=order.get(d.pk, 1),
            working_on="" if down else doing,
            stalled=not doing and now - d.updated_at > STALLED_AFTER,
            worker_down=down,
        )
        for d in waiting
    }


def queue_place_for(user, document: Document) -> QueuePlace:
    return queue_places(user, [document])[document.pk]


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
    # Titles are sentences ("Syncing your notes"): "the worker is syncing your notes".
    return spec.title[:1].lower() + spec.title[1:]
