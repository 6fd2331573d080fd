"""Library work the worker does: ingest what people add, reprocess on request.

Thin: each takes ids, loads, and calls a service. Enqueued with
transaction.on_commit by the views (see `enqueue`)."""

from __future__ import annotations

from datetime import date

from django.db import transaction

from apps.core.jobs import on_demand_job
from apps.library.documents import ingest_document, reprocess_source
from apps.library.models import Document, Source


@on_demand_job(name="library_ingest", title="Index an added document")
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
) -> str:
    document = Document.objects.select_related("source").filter(pk=document_id).first()
    if document is None:
        return f"document {document_id} was removed before it was indexed"
    override = (date.fromisoformat(published), Document.DateSource.PUBLISHED) if published else None
    document = ingest_document(
        document,
        full=full,
        title=title,
        authors=authors,
        doi=doi,
        date_override=override,
        replaces=list(replaces),
    )
    if document.status == Document.Status.FAILED:
        return f"“{document.title}” failed: {document.error}"
    return f"indexed “{document.title}” ({document.chunks.count()} passages)"


@on_demand_job(name="library_reprocess", title="Reprocess a collection")
def reprocess_source_task(source_id: int, *, run, mode: str = "full") -> str:
    source = Source.objects.filter(pk=source_id).first()
    if source is None:
        return f"collection {source_id} no longer exists"
    done, failed = reprocess_source(source, mode=mode)
    return f"reprocessed {done} documents of “{source.name}” ({failed} failed)"


def enqueue_ingest(document: Document, *, user_id: int, **options) -> None:
    """Queue indexing once the transaction that created the document commits."""
    transaction.on_commit(lambda: ingest_task(document.pk, user_id=user_id, **options))


def enqueue_reprocess(source: Source, *, user_id: int, mode: str) -> None:
    transaction.on_commit(lambda: reprocess_source_task(source.pk, user_id=user_id, mode=mode))
