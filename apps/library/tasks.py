"""Library work the worker does: ingest what people add, reprocess on request.

Thin: each takes ids, loads, and calls a service. Enqueued with
transaction.on_commit by `ingest_queue`, the one way anything queues an ingest.

Lanes (apps.library.ingest.isolated): an ingest first runs in the quick lane;
a file over the quick lane's time or passages is deferred to the long lane,
which one worker thread at a time may run (`_long_lane`); a long-lane task
that finds it taken waits in the queue, not on a thread. So with two worker
threads one is always free for ordinary files.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from django.conf import settings
from django.db import transaction
from django.template.defaultfilters import pluralize
from django.urls import reverse

from apps.core.jobs import on_demand_job, on_worker_start, periodic_job
from apps.core.models import JobRun, Notice
from apps.core.notices import notice_send
from apps.core.schedules import Every
from apps.instance.selectors import setting_reader
from apps.library.index.embeddings import EmbeddingUnavailable, configured_model
from apps.library.index.reindex import reindex
from apps.library.index.tables import index_state
from apps.library.ingest.isolated import LONG, QUICK, ParseCancelled, ParseTooSlow
from apps.library.ingest.sync import SourceBusy, SourceUnavailable, SyncReport, source_sync
from apps.library.models import Document, Source
from apps.library.services import queue
from apps.library.services.documents import document_ingest
from apps.library.services.meta import DocumentMeta

logger = logging.getLogger(__name__)

# How long a long-lane task waits in the queue before trying the lane again.
LANE_RETRY_SECONDS = 5
_long_lane = threading.BoundedSemaphore(1)


class SourcesFailed(Exception):
    """Some sources could not be synced; the others were. The message is the
    job's summary, so the JobRun names each reason."""


def _file_name(document_id: int, **_options) -> str:
    path = Document.objects.filter(pk=document_id).values_list("path", flat=True).first()
    return PurePosixPath(path).name if path else ""


def _collection_name(source_id: int, **_options) -> str:
    return Source.objects.filter(pk=source_id).values_list("name", flat=True).first() or ""


def _ingest_overran(run: JobRun) -> None:
    """The watchdog failed this run for running too long: fail its document
    too, which also stops its parse and keeps whatever it had from being written."""
    document_id = (run.detail or {}).get("document_id")
    if document_id:
        queue.documents_fail(
            ids=[document_id],
            reason=f"indexing ran longer than {settings.JOB_TIME_LIMIT_MINUTES} minutes, the "
            "limit (JARVIS_JOB_TIME_LIMIT_MINUTES)",
        )


@on_demand_job(
    name="library_ingest",
    title="Reading an added document",
    title_of_one="Reading {subject}",
    subject=_file_name,
    on_overrun=_ingest_overran,
)
def ingest_task(
    document_id: int,
    *,
    run,
    token: int | None = None,
    lane: str = QUICK,
    ocr_pages: int | None = None,
    full: bool = False,
    meta: dict | None = None,
    notify: bool = False,
    **queued_before_meta,
) -> str:
    # `queued_before_meta`: a task queued by an older Jarvis carried the
    # metadata as loose keywords (title, authors, doi, published, replaces),
    # DocumentMeta's own field names; one still in the queue after an upgrade
    # is read the same way rather than failing its document.
    known = DocumentMeta.from_json({**queued_before_meta, **(meta or {})})
    document = Document.objects.select_related("source").filter(pk=document_id).first()
    if document is None:
        return "The document was removed before it was read."
    if token is not None and document.queue_token != token:
        return f"“{document.title}”: cancelled or queued again; skipped"
    if lane == LONG and not _long_lane.acquire(blocking=False):
        run.defer(delay=LANE_RETRY_SECONDS)
        return f"“{document.title}” waits for the long lane (another large file is being parsed)"
    try:
        document = document_ingest(
            document=document,
            full=full,
            meta=known,
            lane=lane,
            ocr_pages=ocr_pages,
            cancelled=queue.cancel_check(document_id, token),
        )
    except ParseTooSlow as exc:
        run.defer(lane=LONG, ocr_pages=exc.ocr_pages)
        return f"“{document.title}” needs longer ({exc}): moved to the long lane"
    except ParseCancelled:
        return f"“{document.title}”: cancelled"
    finally:
        if lane == LONG:
            _long_lane.release()
    if notify:
        _notify_owner(document.pk)
    if document.status == Document.Status.FAILED:
        return run.fail(f"Could not read “{document.title}”: {document.error}")
    passages = document.chunks.count()
    return f"Indexed “{document.title}”: {passages} passage{pluralize(passages)}."


def _notify_owner(document_id: int) -> None:
    """A toast for the person whose document this is (never anyone else):
    it is ready to search, or why it could not be read."""
    document = Document.objects.select_related("source").filter(pk=document_id).first()
    if document is None or document.status not in (Document.Status.READY, Document.Status.FAILED):
        return
    # A file by the name it was added under ("report.pdf"); a page or paper by its title.
    by_title = document.kind in (Document.Kind.WEB, Document.Kind.PAPER)
    name = (document.title if by_title else "") or document.path.rsplit("/", 1)[-1]
    url = reverse("library:document", args=[document.pk])
    if document.status == Document.Status.READY:
        notice_send(
            user_id=document.source.owner_id,
            text=f"{name} is ready to search.",
            url=url,
            kind="document",
            subject=name,
        )
    else:
        reason = document.error or "the file could not be read"
        notice_send(
            user_id=document.source.owner_id,
            text=f"Could not read {name}: {reason}",
            level=Notice.Level.ERROR,
            url=url,
            kind="document",
            subject=name,
        )


@on_demand_job(
    name="library_reprocess",
    title="Reading a collection again",
    title_of_one="Reading {subject} again",
    subject=_collection_name,
)
def reprocess_source_task(source_id: int, *, run, mode: str = "full") -> str:
    """A sync runs here; "full" and "failed" queue one ingest per document,
    so a collection of large files never holds a worker thread for long."""
    source = Source.objects.filter(pk=source_id).first()
    if source is None:
        return "The collection no longer exists."
    if mode == "sync":
        report = source_sync(source=source, defer_slow=True)
        enqueue_deferred(report.deferred)
        changed = report.added + report.updated
        summary = f"Synced “{source.name}”: {changed} file{pluralize(changed)} changed"
        if report.failed:
            return f"{summary}, {len(report.failed)} could not be read."
        return f"{summary}."
    documents = source.documents.all()
    if mode == "failed":
        # The page marks them pending while they wait for this job.
        documents = documents.filter(status__in=[Document.Status.FAILED, Document.Status.PENDING])
    documents = list(documents.order_by("pk"))
    for document in documents:
        # A collection's reprocess sends no notice per document.
        ingest_queue(document, full=mode == "full", notify=False)
    count = len(documents)
    return f"Queued {count} document{pluralize(count)} of “{source.name}” to be read again."


def enqueue_deferred(deferred: dict[int, int]) -> None:
    """Queue in the long lane what a sync left for it (id → scanned pages to OCR)."""
    for document in Document.objects.filter(pk__in=list(deferred)).select_related("source"):
        ingest_queue(
            document,
            lane=LONG,
            ocr_pages=deferred.get(document.pk, 0),
            notify=False,  # a folder sync sends no notices
        )


def ingest_queue(
    document: Document,
    *,
    meta: DocumentMeta | None = None,
    lane: str = QUICK,
    notify: bool = True,
    full: bool = False,
    ocr_pages: int | None = None,
) -> None:
    """The library's one way to queue indexing: once the transaction that
    created the document commits, the worker ingests it with `meta` (known
    metadata, the documents it replaces). `notify`: its owner gets a notice
    when it is ready or has failed. `full` re-embeds every passage.

    The run is its owner's (the Jobs page, the priority below). The
    document's token moves on (an older task for it will skip), and the run
    is recorded as queued at once so its owner sees it waiting. People with
    fewer documents waiting go first: one person's hundred uploads do not
    hold back another's note.

    It lives here rather than in `services` because the tasks call the
    services (the two would import each other)."""
    user_id = document.source.owner_id
    options = {"full": True} if full else {}
    if ocr_pages is not None:
        options["ocr_pages"] = ocr_pages
    if meta is not None and meta.to_json():
        options["meta"] = meta.to_json()
    token = queue.token_bump(document)
    waiting = JobRun.objects.filter(
        job=queue.INGEST_JOB, outcome=JobRun.Outcome.QUEUED, user_id=user_id
    )
    priority = max(0, 100 - waiting.count()) if lane == QUICK else 0
    detail = {"document_id": document.pk, "title": document.title[:200]}

    def enqueue() -> None:
        ingest_task.enqueue(
            document.pk,
            user_id=user_id,
            detail=detail,
            priority=priority,
            token=token,
            lane=lane,
            notify=notify,
            **options,
        )

    transaction.on_commit(enqueue)


@on_worker_start
def recover_documents() -> None:
    """Documents a stopped worker left pending or parsing are queued again
    (or failed, the second time the parser died on them)."""
    requeue, failed = queue.documents_to_recover()
    for document in requeue:
        ingest_queue(document, notify=False)
    if requeue or failed:
        logger.warning(
            "recovered %s documents left half-indexed (%s queued again, %s failed)",
            len(requeue) + failed,
            len(requeue),
            failed,
        )


# No time limit: re-embedding grows with the library (hours for a large one at
# ~11 passages a second), and its progress on the Jobs page shows it is alive.
@on_demand_job(
    name="library_reindex",
    title="Re-indexing the library for the new search model",
    time_limited=False,
)
def reindex_task(*, run) -> str:
    """Fill a new generation of vectors with the model an admin chose; search
    keeps using the current one until the swap at the end."""

    def progress(done: int, total: int) -> None:
        share = 100 * done / total if total else 100
        run.progress(f"embedded {done}/{total} passages ({share:.0f}%) with {model}")

    model = configured_model().name
    run.progress(f"re-embedding every passage with {model}", force=True)
    report = reindex(progress=progress)
    return (
        f"re-embedded {report.chunks} passages with {report.model} (generation {report.generation})"
    )


def enqueue_reindex_if_model_changed() -> bool:
    """Queue a reindex when the chosen embedding model is not the one the
    index was built with (and none is running). True when one was queued."""
    state = index_state()
    try:
        wanted = configured_model()
    except EmbeddingUnavailable:
        logger.warning("the chosen embedding model cannot be loaded; no reindex queued")
        return False
    if state.reindexing_since or (state.model_name, state.dimension) == (
        wanted.name,
        wanted.dimension,
    ):
        return False
    transaction.on_commit(lambda: reindex_task())
    return True


def enqueue_reprocess(source: Source, *, user_id: int, mode: str) -> None:
    transaction.on_commit(lambda: reprocess_source_task(source.pk, user_id=user_id, mode=mode))


@dataclass
class _Scan:
    lines: list[str] = field(default_factory=list)  # one per source synced
    unavailable: list[str] = field(default_factory=list)  # sources that could not be read
    failed_files: list[str] = field(default_factory=list)
    total: SyncReport = field(default_factory=SyncReport)


def _sync_kind(kind: str) -> _Scan:
    """Sync every source of `kind`; one source's failure never stops the next."""
    scan = _Scan()
    for source in Source.objects.filter(kind=kind).select_related("owner").order_by("pk"):
        # Named with its owner: each person's vault may have the same name.
        name = f"{source.name} ({source.owner.name})"
        try:
            report = source_sync(source=source, defer_slow=True)
        except SourceBusy:
            # `kb sync` (or a reprocess) is doing this very work: not a failure.
            scan.lines.append(f"{name}: already syncing elsewhere, skipped")
            continue
        except SourceUnavailable as exc:
            scan.unavailable.append(f"{name}: {exc}")
            continue
        enqueue_deferred(report.deferred)
        scan.total.merge(report)
        changed = report.added + report.updated + report.removed
        line = (
            f"{name}: {changed} file{pluralize(changed)} changed"
            if changed
            else f"{name}: no changes"
        )
        if report.failed:
            line += f", {len(report.failed)} could not be read"
        scan.lines.append(line)
        scan.failed_files.extend(f"{name}/{f['path']}: {f['reason']}" for f in report.failed)
    return scan


def _finish(summary: str, scan: _Scan) -> str:
    if scan.unavailable:
        raise SourcesFailed("; ".join([*scan.unavailable, summary]))
    return summary


@periodic_job(
    name="sources_sync",
    title="Syncing your notes",
    schedule=Every(setting_reader("sync_interval_minutes")),
    at_start=True,
)
def sources_sync() -> str:
    scan = _sync_kind(Source.Kind.VAULT)
    if not scan.lines and not scan.unavailable:
        return "no note folders registered"
    summary = "; ".join(scan.lines) or "nothing synced"
    if scan.failed_files:
        failed = len(scan.failed_files)
        first = scan.failed_files[0]
        summary += f" ({failed} file{pluralize(failed)} could not be read, first: {first})"
    return _finish(summary, scan)


def _paper_line(paper: dict[str, str]) -> str:
    details = [paper["authors"]] if paper["authors"] else []
    if paper["doi"]:
        details.append(f"doi:{paper['doi']}")
    return f"“{paper['title']}”" + (f" ({', '.join(details)})" if details else "")


@periodic_job(
    name="inbox_scan",
    title="Checking the PDF inboxes",
    schedule=Every(setting_reader("inbox_interval_minutes")),
)
def inbox_scan() -> str:
    scan = _sync_kind(Source.Kind.INBOX)
    if not scan.lines and not scan.unavailable:
        return "no PDF inboxes registered"
    papers = [_paper_line(paper) for paper in scan.total.indexed]
    summary = (
        f"read {len(papers)} new: " + "; ".join(papers) if papers else "no new or changed PDFs"
    )
    if scan.total.waiting:
        summary += f"; {len(scan.total.waiting)} still being written (next scan)"
    if scan.failed_files:
        summary += f"; {len(scan.failed_files)} could not be read: " + "; ".join(scan.failed_files)
    return _finish(summary, scan)
