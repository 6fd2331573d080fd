"""Services on one document: (re)ingest from its original, edit metadata,
remove from the library, reprocess a collection."""

from __future__ import annotations

import logging

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from apps.core.errors import Refused
from apps.library.index import fts, tables
from apps.library.index.embeddings import Embedder, get_embedder
from apps.library.ingest.isolated import (
    LONG,
    CancelCheck,
    ParseCancelled,
    ParseItem,
    ParserCrashed,
    ParseTooSlow,
    parse_one,
)
from apps.library.ingest.parsing.types import ParseOptions, UnreadableDocument
from apps.library.ingest.pipeline import (
    apply_parsed,
    embed_in_slices,
    embed_missing,
    mark_failed,
    prepare,
)
from apps.library.ingest.storage import original_path, original_release, read_original
from apps.library.ingest.sync import refresh_families
from apps.library.ingest.vision import images_describe, parse_options_for, vision_plan
from apps.library.models import Document, Source, SourceExclusion
from apps.library.paths import under
from apps.library.previews import release_after_commit
from apps.library.services.meta import DocumentMeta

logger = logging.getLogger(__name__)

EDITABLE_KINDS = (Document.Kind.PAPER, Document.Kind.WEB)
EDITABLE_FIELDS = ("title", "authors", "doi")
STOPPED_TWICE = "stopped the parser twice; not retried"


def set_status(document: Document, status: str, error: str = "") -> None:
    document.status, document.error = status, error
    Document.objects.filter(pk=document.pk).update(status=status, error=error, progress="")


def set_progress(document: Document, progress: str) -> None:
    """What the worker is doing, shown beside "parsing" (one autocommitted update)."""
    document.progress = progress[:200]
    Document.objects.filter(pk=document.pk).update(progress=document.progress)


def document_ingest(
    *,
    document: Document,
    embedder: Embedder | None = None,
    full: bool = False,
    meta: DocumentMeta | None = None,
    lane: str = LONG,
    ocr_pages: int | None = None,
    cancelled: CancelCheck | None = None,
) -> Document:
    """Parse a stored document's original (in a child process with the
    `lane`'s limits) and index it: pending → parsing → ready or failed.
    `full` re-embeds every chunk instead of reusing vectors for unchanged
    text. Known metadata (`meta`: a paper's title from arXiv) wins over what
    the parser guessed. `meta.replaces`: documents this one supersedes; they
    are removed in the same transaction that writes it, so there is never a
    moment with no copy or with two.

    Raises ParseTooSlow (quick lane: the caller moves it to the long lane;
    the document is pending again) and ParseCancelled (`cancelled()` turned
    true: nothing is written). A parser that crashes is tried once more; the
    second crash fails the document with STOPPED_TWICE. `ocr_pages`: the
    scanned pages the quick lane counted, which lengthen the long lane's
    limit (None: not counted; the plain limit)."""
    meta = meta or DocumentMeta()
    source = document.source
    set_status(document, Document.Status.PARSING)
    plan = vision_plan(source, in_private_dir=under(document.path, source.private_dirs))
    try:
        parsed, mtime_ns = _parse_original(
            document,
            options=parse_options_for(source, plan),
            lane=lane,
            ocr_pages=ocr_pages,
            cancelled=cancelled,
        )
    except (UnreadableDocument, Refused) as exc:
        with transaction.atomic():
            if cancelled is not None and cancelled.now():
                raise ParseCancelled() from None
            mark_failed(document, source=source, path=document.path, reason=str(exc))
        return document
    except ParseTooSlow:
        set_status(document, Document.Status.PENDING)  # it waits for the long lane
        raise
    title, authors, doi = meta.title, meta.authors, meta.doi
    if document.kind == Document.Kind.PAPER:
        # A paper's metadata came from arXiv; the PDF parser would only guess.
        title, authors, doi = (
            title or document.title,
            authors or document.authors,
            doi or document.doi,
        )
    parsed.title = title or parsed.title
    parsed.authors = authors or parsed.authors
    parsed.doi = doi or parsed.doi
    # Network work (a vision model), after the parse and before any transaction.
    try:
        images_describe(
            parsed,
            source=source,
            plan=plan,
            title=parsed.title,
            progress=lambda message: set_progress(document, message),
        )
    except Exception as exc:  # recorded on the document; the job run records the traceback
        set_status(document, Document.Status.FAILED, f"describing images failed: {exc}")
        raise
    prepared = prepare(parsed, parsed.title)
    progress = _embedding_progress(document, cancelled)
    try:
        if full:
            _embed_all(prepared, embedder or get_embedder(), progress)
        else:
            embed_missing(
                prepared, embedder=embedder or get_embedder(), source=source, progress=progress
            )
    except ParseCancelled:
        raise  # cancelled while it embedded: nothing is written, the person's word stands
    except Exception as exc:  # recorded on the document; the job run records the traceback
        set_status(document, Document.Status.FAILED, f"embedding failed: {exc}")
        raise
    fallback = None
    if document.fetched_at:
        fallback = (timezone.localtime(document.fetched_at).date(), Document.DateSource.FETCHED)
    document.parser_crashes = 0
    with transaction.atomic():
        if cancelled is not None and cancelled.now():
            raise ParseCancelled()  # cancelled while it embedded: the person's word stands
        apply_parsed(
            document,
            source=source,
            parsed=parsed,
            prepared=prepared,
            path=document.path,
            mtime_ns=mtime_ns,
            date_override=meta.date_override(),
            date_fallback=fallback,
        )
        for old in Document.objects.filter(pk__in=meta.replaces, source__owner=source.owner):
            tables.delete_document(old)
    refresh_families(source)
    document.refresh_from_db()
    return document


def _parse_original(
    document: Document, *, options: ParseOptions, lane: str, ocr_pages: int | None, cancelled
) -> tuple:
    data = read_original(document)
    mtime_ns = original_path(document).stat().st_mtime_ns
    item = ParseItem(
        data=data, kind=document.kind, filename=document.path, url=document.url, options=options
    )
    while True:
        try:
            return parse_one(item, lane=lane, ocr_pages=ocr_pages, cancelled=cancelled), mtime_ns
        except ParserCrashed as exc:
            if record_parser_crash(document) >= 2:
                raise UnreadableDocument(STOPPED_TWICE) from exc
            logger.warning(
                "the parser crashed on document %s (%s); trying once more", document.pk, exc
            )


def record_parser_crash(document: Document) -> int:
    """Count one more crash of the parser on this document; returns the count."""
    Document.objects.filter(pk=document.pk).update(parser_crashes=F("parser_crashes") + 1)
    document.parser_crashes = Document.objects.values_list("parser_crashes", flat=True).get(
        pk=document.pk
    )
    return document.parser_crashes


def _embedding_progress(document: Document, cancelled: CancelCheck | None):
    """For a large document: its page shows how far embedding has got (minutes
    for thousands of passages), and a cancel stops it between slices."""

    def report(done: int, total: int) -> None:
        if cancelled is not None and cancelled():
            raise ParseCancelled()
        set_progress(document, f"embedding {done:,} of {total:,} passages")

    return report


def _embed_all(prepared, embedder: Embedder, progress) -> None:
    texts = [tables.embed_text(p.header, p.draft.section, p.draft.text) for p in prepared]
    for p, vector in zip(prepared, embed_in_slices(embedder, texts, progress), strict=True):
        p.vector = vector


def document_metadata_update(
    *, user, document: Document, title: str, authors: str, doi: str
) -> Document:
    """Correct a paper's or web page's title, authors or DOI. Metadata only:
    nothing is re-embedded. Notes are read-only here: their file is the truth."""
    if document.source.owner_id != user.pk:
        raise Refused("only the owner can edit this document")
    if document.kind not in EDITABLE_KINDS:
        raise Refused("notes are edited in their file; Jarvis only reads them")
    title = " ".join(title.split())[:500]
    if not title:
        raise Refused("a title cannot be empty")
    values = {"title": title, "authors": " ".join(authors.split())[:1000], "doi": doi.strip()[:200]}
    edited = set(document.edited or [])
    for field, value in values.items():
        if getattr(document, field) != value:
            edited.add(field)
        setattr(document, field, value)
    document.edited = sorted(edited)
    # Last write wins: two tabs saving in turn both succeed, the later one shows.
    with transaction.atomic():
        document.save(update_fields=[*values, "edited", "updated_at"])
        fts.refresh_document(document)  # the title is a keyword column
    return document


def document_remove(*, user, document: Document) -> int:
    """Remove a document from the library: its chunks, keyword rows and vectors
    go in one transaction. A folder document's file is never touched: its path
    is remembered as excluded so the next sync leaves it out. An upload's,
    page's or paper's stored copy (Jarvis's own, in the data dir) is deleted
    once the transaction has committed and no other document refers to it."""
    if document.source.owner_id != user.pk:
        raise Refused("only the owner can remove this document")
    stored = document.original
    with transaction.atomic():
        if document.source.is_folder:
            for path in {document.path, *document.files.values_list("path", flat=True)}:
                SourceExclusion.objects.get_or_create(source=document.source, path=path)
        rows = tables.delete_document(document)
        if stored:
            transaction.on_commit(lambda: original_release(stored))
        release_after_commit(document.content_hash)
    refresh_families(document.source)
    return rows


def source_path_restore(*, user, source: Source, path: str) -> None:
    if source.owner_id != user.pk:
        raise Refused("only the owner can restore files of this collection")
    SourceExclusion.objects.filter(source=source, path=path).delete()


def documents_mark_pending(*, documents) -> int:
    """Show documents as queued for reprocessing before the worker starts."""
    return Document.objects.filter(pk__in=[d.pk for d in documents]).update(
        # update() skips auto_now: the time it was queued tells how long it has waited.
        status=Document.Status.PENDING,
        error="",
        updated_at=timezone.now(),
    )
