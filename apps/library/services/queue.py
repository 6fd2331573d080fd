"""A document's place in the indexing queue: its token, cancelling, and what
a worker finds half-done when it starts.

Each time a document is queued (or cancelled) its `queue_token` moves on. A
task carries the token it was queued with; when the document's token has
moved, the task's work is no longer wanted: it skips, or stops its parse and
writes nothing. The JobRun of a queued task names the document
(`detail.document_id`), so the Jobs page shows it and recovery knows which
documents still have a task on the way.
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import F

from apps.core.errors import Refused
from apps.core.jobs import cancel_queued
from apps.core.locks import is_held, process_lock
from apps.core.models import JobRun
from apps.library.ingest.isolated import CancelCheck
from apps.library.models import Document
from apps.library.services.documents import STOPPED_TWICE, record_parser_crash

INGEST_JOB = "library_ingest"
IN_FLIGHT = (Document.Status.PENDING, Document.Status.PARSING)


def token_bump(document: Document) -> int:
    """Move the document's token on; returns the new value."""
    Document.objects.filter(pk=document.pk).update(queue_token=F("queue_token") + 1)
    document.queue_token = Document.objects.values_list("queue_token", flat=True).get(
        pk=document.pk
    )
    return document.queue_token


def cancel_check(document_id: int, token: int | None) -> CancelCheck | None:
    """For a running task: true once its document was cancelled, removed or queued again."""
    if token is None:
        return None
    return CancelCheck(lambda: Document.objects.filter(pk=document_id, queue_token=token).exists())


def queued_runs_of(document: Document):
    return JobRun.objects.filter(
        job=INGEST_JOB,
        outcome=JobRun.Outcome.QUEUED,
        detail__document_id=document.pk,
    )


def has_live_task(document: Document) -> bool:
    """A worker task is queued for the document or running it."""
    return JobRun.objects.filter(
        job=INGEST_JOB,
        outcome__in=[JobRun.Outcome.QUEUED, JobRun.Outcome.RUNNING],
        detail__document_id=document.pk,
    ).exists()


def _cli_lock_name(document_id: int) -> str:
    return f"ingest-{document_id}"


def cli_ingest_lock(document: Document, *, wait: float = 0.0):
    """Held by a process indexing a document outside the worker (`kb add`): a
    document in flight with neither this lock held nor a worker task was left
    by a process that died, and may be taken up again."""
    return process_lock(_cli_lock_name(document.pk), wait=wait)


def _require_owner(user, document: Document) -> None:
    if document.source.owner_id != user.pk:
        raise Refused("only the owner can do this")


def document_cancel(*, user, document: Document) -> None:
    """Stop indexing a waiting or parsing document: it ends failed ("cancelled"),
    its queued task skips, a running parse is stopped within a second or so,
    and nothing it had parsed is written. Retry queues it again."""
    _require_owner(user, document)
    if document.status not in IN_FLIGHT:
        raise Refused("only a document that is waiting or being indexed can be cancelled")
    with transaction.atomic():
        token_bump(document)
        Document.objects.filter(pk=document.pk).update(
            status=Document.Status.FAILED, error=f"cancelled by {user.name}"
        )
        cancel_queued(queued_runs_of(document).values_list("pk", flat=True))
    document.refresh_from_db()


def document_prepare_retry(*, user, document: Document) -> None:
    """Before queuing a document again by hand: it must be the person's and
    not ready; its queued task (if any) is dropped and its crash count reset
    (the person asked for one more try)."""
    _require_owner(user, document)
    if document.status == Document.Status.READY:
        raise Refused("this document is indexed; use Reprocess to index it again")
    with transaction.atomic():
        cancel_queued(queued_runs_of(document).values_list("pk", flat=True))
        Document.objects.filter(pk=document.pk).update(
            status=Document.Status.PENDING, error="", parser_crashes=0
        )
    document.refresh_from_db()


def documents_fail(*, ids, reason: str) -> int:
    """Fail documents whose work was abandoned (a job past its time limit)."""
    with transaction.atomic():
        return Document.objects.filter(pk__in=list(ids), status__in=IN_FLIGHT).update(
            status=Document.Status.FAILED,
            error=reason,
            queue_token=F("queue_token") + 1,
        )


def documents_to_recover() -> tuple[list[Document], int]:
    """At worker start: documents left pending or parsing with no task on the
    way. One that was being parsed when its worker died counts as a parser
    crash; the second crash fails it with STOPPED_TWICE. Returns the ones to
    queue again and how many were failed. Runs before the worker takes any
    task, after runs of the dead worker were closed."""
    live = JobRun.objects.filter(
        job=INGEST_JOB, outcome__in=[JobRun.Outcome.QUEUED, JobRun.Outcome.RUNNING]
    ).values_list("detail__document_id", flat=True)
    waiting = {pk for pk in live if pk is not None}
    requeue, failed = [], 0
    stranded = Document.objects.filter(status__in=IN_FLIGHT).exclude(pk__in=waiting)
    for document in stranded.select_related("source").order_by("pk"):
        if is_held(_cli_lock_name(document.pk)):
            continue  # a `kb add` is indexing it right now
        if document.status == Document.Status.PARSING and record_parser_crash(document) >= 2:
            Document.objects.filter(pk=document.pk).update(
                status=Document.Status.FAILED, error=STOPPED_TWICE
            )
            failed += 1
            continue
        requeue.append(document)
    return requeue, failed
