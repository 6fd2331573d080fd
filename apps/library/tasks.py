"""Library work the worker does: ingest what people add, reprocess on request.

Thin: each takes ids, loads, and calls a service. Enqueued with
transaction.on_commit by the views (see `enqueue`)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import date
from pathlib import PurePosixPath

from django.db import transaction
from django.template.defaultfilters import pluralize
from django.urls import reverse

from apps.core.jobs import on_demand_job, periodic_job
from apps.core.models import Notice
from apps.core.notices import notice_send
from apps.core.schedules import Every
from apps.instance.selectors import setting_reader
from apps.library.index.embeddings import EmbeddingUnavailable, configured_model
from apps.library.index.reindex import reindex
from apps.library.index.tables import index_state
from apps.library.ingest.sync import SourceUnavailable, SyncReport, source_sync
from apps.library.models import Document, Source
from apps.library.services.documents import document_ingest, source_reprocess

logger = logging.getLogger(__name__)


class SourcesFailed(Exception):
    """Some sources could not be synced; the others were. The message is the
    job's summary, so the JobRun names each reason."""


def _file_name(document_id: int, **_options) -> str:
    path = Document.objects.filter(pk=document_id).values_list("path", flat=True).first()
    return PurePosixPath(path).name if path else ""


def _collection_name(source_id: int, **_options) -> str:
    return Source.objects.filter(pk=source_id).values_list("name", flat=True).first() or ""


@on_demand_job(
    name="library_ingest",
    title="Reading an added document",
    title_of_one="Reading {subject}",
    subject=_file_name,
)
def ingest_task(
    document_id: int,
    *,
    run,
    full: bool = False,
    title: str = "",
    authors: str = "",
    doi: str = "",
    published: str = "",
    replaces: tuple[int, ...] = (),
    notify: bool = False,
) -> str:
    document = Document.objects.select_related("source").filter(pk=document_id).first()
    if document is None:
        return "The document was removed before it was read."
    try:
        return _ingest(run, document, full, title, authors, doi, published, replaces)
    finally:
        if notify:
            _notify_owner(document_id)


def _ingest(run, document, full, title, authors, doi, published, replaces) -> str:
    override = (date.fromisoformat(published), Document.DateSource.PUBLISHED) if published else None
    document = document_ingest(
        document=document,
        full=full,
        title=title,
        authors=authors,
        doi=doi,
        date_override=override,
        replaces=list(replaces),
    )
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
        notice_send(user_id=document.source.owner_id, text=f"{name} is ready to search.", url=url)
    else:
        reason = document.error or "the file could not be read"
        notice_send(
            user_id=document.source.owner_id,
            text=f"Could not read {name}: {reason}",
            level=Notice.Level.ERROR,
            url=url,
        )


@on_demand_job(
    name="library_reprocess",
    title="Reading a collection again",
    title_of_one="Reading {subject} again",
    subject=_collection_name,
)
def reprocess_source_task(source_id: int, *, run, mode: str = "full") -> str:
    source = Source.objects.filter(pk=source_id).first()
    if source is None:
        return "The collection no longer exists."
    done, failed = source_reprocess(source=source, mode=mode)
    summary = f"Read {done} document{pluralize(done)} of “{source.name}” again"
    return f"{summary}; {failed} could not be read." if failed else f"{summary}."


@on_demand_job(name="library_reindex", title="Re-indexing the library for the new search model")
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


def enqueue_ingest(document: Document, *, user_id: int, notify: bool = True, **options) -> None:
    """Queue indexing once the transaction that created the document commits.
    `notify`: its owner gets a notice when it is ready or has failed."""
    transaction.on_commit(
        lambda: ingest_task(document.pk, user_id=user_id, notify=notify, **options)
    )


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
            report = source_sync(source=source)
        except SourceUnavailable as exc:
            scan.unavailable.append(f"{name}: {exc}")
            continue
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
