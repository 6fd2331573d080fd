"""Incremental sync of a folder source.

Unchanged files (same size and mtime, else same bytes) cost no parsing and no
embedding; a changed file re-embeds only chunks whose text changed; vanished
files leave with their chunks and index rows; a renamed file keeps its chunks
(same bytes under a new path are the same document). Each document is written
in one short transaction after its parsing and embedding are done, so a crash
mid-document leaves its previous version intact. A second sync of an
unchanged folder embeds nothing and writes nothing.

Parsing happens in child processes (apps.library.ingest.isolated): small
notes in batches, everything else one file per child, all in the quick lane.
A file that needs longer is, in the worker (`defer_slow`), left pending and
listed in `report.deferred` for the long lane; elsewhere (`kb sync`) it is
parsed right away with the long lane's limits.

A PDF inbox is synced the same way with three differences: only PDFs count
(lock files like `~$x.pdf` and partial downloads are skipped), a file modified
within the last JARVIS_INBOX_QUIET_SECONDS may still be being written and is
left for the next scan, and a file that leaves the inbox keeps its library
entry (an inbox, not a mirror).
"""

from __future__ import annotations

import logging
import os
import time
from contextlib import ExitStack
from dataclasses import asdict, dataclass, field
from datetime import date
from pathlib import Path, PurePosixPath

from django.conf import settings
from django.db import transaction

from apps.core.errors import Refused
from apps.core.locks import Busy, process_lock
from apps.library.index import fts, tables
from apps.library.index.embeddings import BULK, Embedder, get_embedder
from apps.library.ingest.embeds import add_embedded_passages
from apps.library.ingest.isolated import (
    BATCH_BYTES,
    BATCH_FILES,
    LONG,
    QUICK,
    ParseItem,
    ParseTooSlow,
    parse_many,
)
from apps.library.ingest.parsing.types import ParsedDocument, ParseOptions, UnreadableDocument
from apps.library.ingest.pipeline import (
    apply_parsed,
    content_hash,
    embed_missing,
    humanise,
    keep_queue_token,
    mark_failed,
    prepare,
)
from apps.library.ingest.vision import (
    VisionPlan,
    images_describe,
    parse_options_for,
    vision_plan,
)
from apps.library.ingest.walk import FileInfo, walk_source
from apps.library.models import Document, DocumentFile, Source
from apps.library.paths import under
from apps.library.versions import linking
from apps.library.versions.naming import date_from_filename, is_copy_name

logger = logging.getLogger(__name__)

CROSS_FOLDER_TEXT_CHARS = 20_000


class SourceUnavailable(Refused):
    pass


class SourceBusy(SourceUnavailable):
    """Another process (the worker, `kb sync`) is syncing this source now."""


# How long a second sync of one source waits for the first before it says so.
SYNC_WAIT_SECONDS = 5.0


@dataclass
class SyncReport:
    seen: int = 0
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: int = 0
    failed: list[dict[str, str]] = field(default_factory=list)
    chunks_embedded: int = 0
    rows_written: int = 0
    seconds: float = 0.0
    waiting: list[str] = field(default_factory=list)  # inbox files still being written
    indexed: list[dict[str, str]] = field(default_factory=list)  # inbox: title, authors, DOI
    # Documents left for the long lane: id → scanned pages it needs read by
    # OCR (0 when it is merely large), which sizes its time limit there.
    deferred: dict[int, int] = field(default_factory=dict)

    def merge(self, other: SyncReport) -> None:
        for name in ("seen", "added", "updated", "unchanged", "removed"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.failed.extend(other.failed)
        self.waiting.extend(other.waiting)
        self.indexed.extend(other.indexed)
        self.deferred.update(other.deferred)
        self.chunks_embedded += other.chunks_embedded
        self.rows_written += other.rows_written
        self.seconds += other.seconds

    def as_dict(self) -> dict:
        """The documented `kb sync --json` fields; the inbox extras stay in
        the job's summary."""
        data = asdict(self)
        data["seconds"] = round(self.seconds, 3)
        del data["waiting"], data["indexed"], data["deferred"]
        return data


def check_folder(path: str | Path) -> Path:
    """The folder, or SourceUnavailable saying what is wrong with it."""
    folder = Path(path)
    if not folder.exists():
        raise SourceUnavailable(f"{folder} does not exist")
    if not folder.is_dir():
        raise SourceUnavailable(f"{folder} is not a folder")
    if not os.access(folder, os.R_OK | os.X_OK):
        raise SourceUnavailable(f"{folder} is not readable by the Jarvis user")
    return folder


def primary_path(paths: list[str]) -> str:
    """Of several identical files, the one to show: not a copy, then the shortest."""
    return min(paths, key=lambda p: (is_copy_name(PurePosixPath(p).stem), len(p), p))


EMBED_GROUP = 64  # chunks parsed ahead and embedded in one call


@dataclass
class _ToParse:
    info: FileInfo
    data: bytes
    digest: str
    current: DocumentFile | None

    options: ParseOptions

    @property
    def item(self) -> ParseItem:
        return ParseItem(
            data=self.data, kind=self.info.kind, filename=self.info.rel, options=self.options
        )


@dataclass
class _Pending:
    document: Document
    info: FileInfo
    size: int
    current: DocumentFile | None
    parsed: object
    prepared: list
    digest: str
    previous_hash: str | None


class _Sync:
    def __init__(self, source: Source, embedder: Embedder | None, defer_slow: bool) -> None:
        self.source = source
        self._embedder = embedder
        self.defer_slow = defer_slow
        self.to_parse: list[_ToParse] = []
        self.report = SyncReport()
        self.touched: set[int] = set()  # documents whose set of paths changed
        self.by_hash: dict[str, Document] = {}
        self.pending: list[_Pending] = []
        self.pending_chunks = 0
        self.inbox = source.kind == Source.Kind.INBOX
        self._plans: dict[bool, VisionPlan] = {}  # by "in a private folder"
        # Parsed notes that embed other notes, written after everything else.
        self.embedding: list[tuple[_ToParse, ParsedDocument]] = []

    def plan(self, rel: str) -> VisionPlan:
        private = under(rel, self.source.private_dirs)
        if private not in self._plans:
            self._plans[private] = vision_plan(self.source, in_private_dir=private)
        return self._plans[private]

    def options(self, rel: str) -> ParseOptions:
        return parse_options_for(self.source, self.plan(rel))

    @property
    def embedder(self) -> Embedder:
        # Only a sync that has something to embed loads the model.
        if self._embedder is None:
            self._embedder = get_embedder()
        return self._embedder

    def run(self) -> SyncReport:
        started = time.perf_counter()
        state = tables.require_matching_model()
        if state.reindexing_since:
            raise SourceUnavailable("a reindex is running; sync again when it has finished")
        root = check_folder(self.source.root_path)
        excluded = set(self.source.exclusions.values_list("path", flat=True))
        files = [f for f in walk_source(root, self.source.skip_dirs) if f.rel not in excluded]
        if self.inbox:
            files = self._inbox_ready(files)
        existing = {
            f.path: f
            for f in DocumentFile.objects.filter(source=self.source).select_related("document")
        }
        for document in self.source.documents.all():
            self.by_hash.setdefault(document.content_hash, document)
        for info in files:
            self.report.seen += 1
            try:
                self._one_file(info, existing.get(info.rel))
            except Exception as exc:  # one bad file must not stop the sync; logged below
                logger.exception("sync of %s in source %s failed", info.rel, self.source.pk)
                self.report.failed.append({"path": info.rel, "reason": f"internal error: {exc}"})
        self._parse_waiting()
        self._flush()
        self._embed_notes()
        seen = {info.rel for info in files}
        for path, entry in existing.items():
            if path not in seen and not self.inbox:
                self._vanished(entry)
        self._refresh_primary_paths()
        self.report.rows_written += refresh_families(self.source)
        self.report.seconds = time.perf_counter() - started
        return self.report

    def _inbox_ready(self, files: list[FileInfo]) -> list[FileInfo]:
        """The inbox's PDFs that are complete: not lock files, not touched
        within the quiet period (a download or copy still in progress)."""
        quiet_since = time.time_ns() - settings.INBOX_QUIET_SECONDS * 1_000_000_000
        ready = []
        for info in files:
            name = PurePosixPath(info.rel).name
            if info.kind != "pdf" or name.startswith("~$"):
                continue
            if info.mtime_ns > quiet_since:
                self.report.waiting.append(info.rel)
                continue
            ready.append(info)
        return ready

    def _one_file(self, info: FileInfo, current: DocumentFile | None) -> None:
        if current and current.size == info.size and current.mtime_ns == info.mtime_ns:
            self.report.unchanged += 1
            return
        try:
            data = info.absolute.read_bytes()
        except OSError as exc:
            # Deleted or locked mid-sync: the next run converges.
            reason = exc.strerror or type(exc).__name__
            self.report.failed.append({"path": info.rel, "reason": f"could not read: {reason}"})
            return
        digest = content_hash(data)
        if current and current.document.content_hash == digest:
            DocumentFile.objects.filter(pk=current.pk).update(
                size=len(data), mtime_ns=info.mtime_ns
            )
            self.report.rows_written += 1
            self.report.unchanged += 1
            return
        waiting = [*self.to_parse, *self.pending, *(job for job, _ in self.embedding)]
        if any(item.digest == digest for item in waiting):
            # An identical file is waiting: write it first, then attach.
            self._parse_waiting()
            self._flush()
            self._embed_notes()
        twin = self.by_hash.get(digest)
        # Empty files all share one hash, and a .md and a .pdf with the same
        # bytes are not copies of one document: only same-kind, non-empty twins.
        if twin is not None and twin.pk is not None and data and twin.kind == info.kind:
            self._attach(twin, info, len(data), current)
            return
        self._index(info, data, digest, current)

    def _attach(self, twin: Document, info: FileInfo, size: int, current) -> None:
        """Same bytes as a known document: an exact duplicate or a rename."""
        with transaction.atomic():
            if current is not None:
                self.touched.add(current.document_id)
                current.delete()
            DocumentFile.objects.create(
                document=twin, source=self.source, path=info.rel, size=size, mtime_ns=info.mtime_ns
            )
        self.touched.add(twin.pk)
        self.report.rows_written += 2 if current else 1
        if current is None:
            self.report.added += 1
        else:
            self.report.updated += 1

    def _index(self, info: FileInfo, data: bytes, digest: str, current) -> None:
        """Queue the file for parsing: small notes wait to fill a batch (one
        child for many), anything else is parsed on its own right away."""
        job = _ToParse(info, data, digest, current, self.options(info.rel))
        if not job.item.batchable:
            self._parse_waiting()
            self._parse([job])
            return
        self.to_parse.append(job)
        waiting_bytes = sum(len(j.data) for j in self.to_parse)
        if len(self.to_parse) >= BATCH_FILES or waiting_bytes >= BATCH_BYTES:
            self._parse_waiting()

    def _parse_waiting(self) -> None:
        jobs, self.to_parse = self.to_parse, []
        if jobs:
            self._parse(jobs)

    def _parse(self, jobs: list[_ToParse]) -> None:
        results = parse_many([job.item for job in jobs], lane=QUICK)
        for job, result in zip(jobs, results, strict=True):
            if isinstance(result, ParseTooSlow):
                if self.defer_slow:
                    self._defer(job, ocr_pages=result.ocr_pages)
                    continue
                result = parse_many([job.item], lane=LONG, ocr_pages=result.ocr_pages)[0]
            self._parsed(job, result)

    def _document_for(self, job: _ToParse) -> tuple[Document, str | None]:
        current = job.current
        sole = current is not None and current.document.files.count() == 1
        document = current.document if sole else Document(source=self.source, kind=job.info.kind)
        previous_hash = document.content_hash if sole else None
        document.content_hash, document.size = job.digest, len(job.data)
        return document, previous_hash

    def _parsed(self, job: _ToParse, result: ParsedDocument | Exception) -> None:
        info, current = job.info, job.current
        if isinstance(result, Exception):
            document, previous_hash = self._document_for(job)
            reason = str(result) if isinstance(result, UnreadableDocument) else repr(result)
            with transaction.atomic():
                rows = mark_failed(document, source=self.source, path=info.rel, reason=reason)
                rows += self._point_file(document, info, len(job.data), current)
            self.report.rows_written += rows
            self.report.failed.append({"path": info.rel, "reason": reason})
            self._indexed(document, job.digest, previous_hash, current)
            return
        if result.embeds:
            # Its embedded notes may not be written yet: this note waits for
            # the end of the sync (apps.library.ingest.embeds).
            self.embedding.append((job, result))
            return
        self._queue_parsed(job, result)

    def _embed_notes(self) -> None:
        waiting, self.embedding = self.embedding, []
        unwritten = {job.info.rel: result for job, result in waiting}
        for job, result in waiting:
            add_embedded_passages(result, source=self.source, path=job.info.rel, waiting=unwritten)
            self._queue_parsed(job, result)
        self._flush()

    def _queue_parsed(self, job: _ToParse, result: ParsedDocument) -> None:
        info, current = job.info, job.current
        document, previous_hash = self._document_for(job)
        # Network work (a vision model), after the parse, outside any transaction.
        images_describe(result, source=self.source, plan=self.plan(info.rel), title=result.title)
        prepared = prepare(result, result.title)
        self.pending.append(
            _Pending(
                document, info, len(job.data), current, result, prepared, job.digest, previous_hash
            )
        )
        self.pending_chunks += len(prepared)
        if self.pending_chunks >= EMBED_GROUP:
            self._flush()

    def _defer(self, job: _ToParse, *, ocr_pages: int) -> None:
        """A file too slow for the quick lane: recorded as pending (its old
        passages, if any, stay searchable meanwhile) for the long lane."""
        info = job.info
        document, previous_hash = self._document_for(job)
        document.status, document.error = Document.Status.PENDING, ""
        document.source = self.source
        if document.pk is None:
            document.path = info.rel
            document.title = humanise(PurePosixPath(info.rel).stem)
            document.in_private_dir = under(info.rel, self.source.private_dirs)
        with transaction.atomic():
            keep_queue_token(document)
            document.save()
            rows = 1 + self._point_file(document, info, len(job.data), job.current)
        self.report.rows_written += rows
        self.report.deferred[document.pk] = ocr_pages
        self._indexed(document, job.digest, previous_hash, job.current)

    def _flush(self) -> None:
        """Embed the parsed documents waiting in `pending` together (one call
        sorted by length pads far less than one call per note), then write each
        document in its own short transaction."""
        pending, self.pending, self.pending_chunks = self.pending, [], 0
        if not pending:
            return
        try:
            embedded = embed_missing(
                [p for item in pending for p in item.prepared],
                embedder=self.embedder,
                source=self.source,
                lane=BULK,  # an upload meanwhile goes first, between slices
            )
        except Exception as exc:  # the model failed: these files wait for the next sync
            logger.exception("embedding failed during sync of source %s", self.source.pk)
            for item in pending:
                self.report.failed.append(
                    {"path": item.info.rel, "reason": f"embedding failed: {exc}"}
                )
            return
        self.report.chunks_embedded += embedded
        for item in pending:
            try:
                with transaction.atomic():
                    rows = apply_parsed(
                        item.document,
                        source=self.source,
                        parsed=item.parsed,
                        prepared=item.prepared,
                        path=item.info.rel,
                        mtime_ns=item.info.mtime_ns,
                    )
                    rows += self._point_file(item.document, item.info, item.size, item.current)
            except Exception as exc:  # one document's write failed; its old version stands
                logger.exception("writing %s failed", item.info.rel)
                self.report.failed.append(
                    {"path": item.info.rel, "reason": f"internal error: {exc}"}
                )
                continue
            self.report.rows_written += rows
            self._indexed(item.document, item.digest, item.previous_hash, item.current)

    def _indexed(self, document: Document, digest: str, previous_hash, current) -> None:
        if previous_hash and self.by_hash.get(previous_hash) is document:
            del self.by_hash[previous_hash]
        self.by_hash[digest] = document
        if current is None:
            self.report.added += 1
        else:
            self.report.updated += 1
        if self.inbox and document.status == Document.Status.READY:
            self.report.indexed.append(
                {"title": document.title, "authors": document.authors, "doi": document.doi}
            )

    def _point_file(self, document: Document, info: FileInfo, size: int, current) -> int:
        if current is None:
            DocumentFile.objects.create(
                document=document,
                source=self.source,
                path=info.rel,
                size=size,
                mtime_ns=info.mtime_ns,
            )
            return 1
        if current.document_id != document.pk:
            self.touched.add(current.document_id)
        DocumentFile.objects.filter(pk=current.pk).update(
            document=document, size=size, mtime_ns=info.mtime_ns
        )
        return 1

    def _vanished(self, entry: DocumentFile) -> None:
        document = entry.document
        # One transaction: a crash must not leave a document without its file.
        with transaction.atomic():
            entry.delete()
            left = document.files.exists()
            if not left:
                self.report.rows_written += tables.delete_document(document)
        self.report.removed += 1
        self.report.rows_written += 1
        if left:
            self.touched.add(document.pk)
        else:
            self.touched.discard(document.pk)

    def _refresh_primary_paths(self) -> None:
        for document in Document.objects.filter(pk__in=self.touched):
            paths = list(document.files.values_list("path", flat=True))
            if not paths:
                continue
            best = primary_path(paths)
            private = under(best, self.source.private_dirs)
            if best == document.path and private == document.in_private_dir:
                continue
            with transaction.atomic():
                moved = private != document.in_private_dir
                renamed = best != document.path
                document.path, document.in_private_dir = best, private
                document.save(update_fields=["path", "in_private_dir"])
                self.report.rows_written += 1
                if moved:
                    self.report.rows_written += tables.repartition(document)
                if renamed:  # the file name's words are a keyword column
                    fts.refresh_document(document)
                    self.report.rows_written += document.chunks.count()


def source_sync(
    *,
    source: Source,
    embedder: Embedder | None = None,
    defer_slow: bool = False,
    wait: float = SYNC_WAIT_SECONDS,
) -> SyncReport:
    """Sync a folder source. `defer_slow` (the worker): files too slow for the
    quick lane are left pending and listed in `report.deferred` for the
    caller to queue in the long lane; otherwise they are parsed right away.
    SourceBusy if another sync of it is still running after `wait` seconds."""
    if not source.is_folder:
        raise SourceUnavailable(f"{source.name} is not a folder source")
    # One sync per source at a time, across processes: two at once both add
    # the same new files (UNIQUE failures reported as failed files) and do
    # the work twice.
    with ExitStack() as held:
        try:
            held.enter_context(process_lock(f"sync-{source.pk}", wait=wait))
        except Busy:
            raise SourceBusy(
                f"{source.name} is already syncing (another sync of it is running); "
                "nothing was done"
            ) from None
        return _Sync(source, embedder, defer_slow).run()


def _failed_date(document: Document) -> tuple[date | None, bool]:
    """A failed version has no parsed content date: its file name's date, else
    it is dated by its file time (weak)."""
    found = date_from_filename(PurePosixPath(document.path).stem)
    return (found.value, False) if found else (None, True)


def refresh_families(source: Source) -> int:
    """Recompute version families, their order and latest flags for a source;
    write only what changed (a stable source writes nothing). Failed versions
    keep their place in the order but are never latest. Returns rows written."""
    documents = list(
        source.documents.filter(status__in=[Document.Status.READY, Document.Status.FAILED])
    )
    mtimes: dict[int, int] = {}
    for document_id, mtime in DocumentFile.objects.filter(source=source).values_list(
        "document_id", "mtime_ns"
    ):
        mtimes[document_id] = max(mtimes.get(document_id, 0), mtime)
    members = []
    for d in documents:
        readable = d.status == Document.Status.READY
        effective, weak = (d.effective_date, d.date_is_weak) if readable else _failed_date(d)
        members.append(
            linking.Member(
                id=d.pk,
                path=d.path,
                title=d.title,
                effective_date=effective,
                mtime_ns=mtimes.get(d.pk) or int((d.fetched_at or d.created_at).timestamp() * 1e9),
                date_is_weak=weak,
                url=d.url,
                readable=readable,
            )
        )
    candidates = linking.cross_folder_candidates(members, source.unversioned_dirs)
    candidates |= linking.mixed_format_candidates(members, source.unversioned_dirs)
    for member in members:
        if member.id in candidates:
            texts = Document.objects.get(pk=member.id).chunks.values_list("text", flat=True)
            member.text = "\n".join(texts)[:CROSS_FOLDER_TEXT_CHARS]
    assignments = linking.assign(members, source.unversioned_dirs)
    rows = 0
    fields = ["family", "version_rank", "is_latest", "family_position"]
    for document in documents:
        wanted = assignments[document.pk]
        now = (wanted.family, wanted.version_rank, wanted.is_latest, wanted.position)
        if tuple(getattr(document, f) for f in fields) == now:
            continue
        latest_changed = document.is_latest != wanted.is_latest
        for name, value in zip(fields, now, strict=True):
            setattr(document, name, value)
        with transaction.atomic():
            document.save(update_fields=fields)
            rows += 1
            if latest_changed:
                rows += tables.repartition(document)
    return rows
