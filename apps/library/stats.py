"""Counts of what a person's library holds (`kb stats`, and later the UI and chat)."""

from __future__ import annotations

from django.db.models import Count

from apps.library.models import Chunk, Document, Source
from apps.library.selectors import sources_visible_to, visible_to


def library_stats(user=None) -> dict:
    """Per-source and overall counts; `user=None` means the whole instance."""
    documents = visible_to(user) if user is not None else Document.objects.all()
    by_status = dict(documents.values_list("status").annotate(n=Count("id")).order_by())
    by_kind = dict(documents.values_list("kind").annotate(n=Count("id")).order_by())
    categories = dict(
        documents.exclude(category="").values_list("category").annotate(n=Count("id")).order_by()
    )
    chunks = Chunk.objects.filter(document__in=documents)
    sources = []
    source_rows = sources_visible_to(user) if user is not None else None
    for source in source_rows if source_rows is not None else Source.objects.all():
        docs = documents.filter(source=source)
        sources.append(
            {
                "id": source.pk,
                "name": source.name,
                "owner": source.owner.username,
                "kind": source.kind,
                "documents": docs.count(),
                "failed": docs.filter(status=Document.Status.FAILED).count(),
                "latest": docs.filter(is_latest=True, status=Document.Status.READY).count(),
            }
        )
    return {
        "documents": documents.count(),
        "chunks": chunks.count(),
        # A person's highlights and notes; figure and photo passages are not theirs.
        "annotations": chunks.exclude(annotation__in=("", "figure", "photo")).count(),
        "by_status": by_status,
        "by_kind": by_kind,
        "categories": categories,
        "sources": sources,
    }
