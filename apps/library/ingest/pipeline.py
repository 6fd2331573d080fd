"""One document's pipeline, shared by folder sync, `kb add` and uploads:
parse (pure) → prepare chunks → embed only new text → write in one short transaction.

Nothing here holds a transaction across parsing or embedding: a crash or an
error before the final `transaction.atomic()` leaves the previous index of the
document exactly as it was.
"""

from __future__ import annotations

import hashlib
import importlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import PurePosixPath

from django.db import transaction
from django.utils import timezone

from apps.library.formats import format_of
from apps.library.index import tables
from apps.library.index.embeddings import BULK, INTERACTIVE, Embedder, turnstile
from apps.library.ingest.parsing.limits import ParseLimits, check_input
from apps.library.ingest.parsing.types import (
    ChunkDraft,
    Figure,
    ParsedDocument,
    ParseOptions,
    ParseRequest,
    UnreadableDocument,
)
from apps.library.models import Chunk, Document, DocumentTag, Source
from apps.library.paths import under
from apps.library.versions.naming import date_from_filename

logger = logging.getLogger(__name__)


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def humanise(stem: str) -> str:
    return " ".join(stem.replace("_", " ").replace("-", " ").split()) or stem


def parse_bytes(
    data: bytes,
    *,
    kind: str,
    filename: str,
    url: str = "",
    options: ParseOptions | None = None,
    limits: ParseLimits | None = None,
) -> ParsedDocument:
    """Bytes → ParsedDocument, or UnreadableDocument with the reason.

    Pure (no database, no network) and bounded by each format's own caps
    (pages OCR'd, parts and unpacked bytes of a package, rows per sheet,
    pixels of an image). Runs in the parser's child process
    (apps.library.sandboxed), never in the worker: call it through
    apps.library.ingest.isolated. The instance's format caps in `limits`
    are checked before any parser sees the bytes. `options` carries the
    collection's OCR languages and whether figure pixels are wanted
    (ParseOptions, plain data)."""
    check_input(data, kind=kind, limits=limits or ParseLimits())
    found = format_of(kind)
    if found is None:
        raise UnreadableDocument(f"Jarvis has no reader for {kind!r} files")
    module, _, function = found.reader.partition(":")
    read = getattr(importlib.import_module(module), function)
    request = ParseRequest(
        kind=kind,
        filename=filename,
        fallback_title=humanise(PurePosixPath(filename).stem),
        url=url,
        options=options or ParseOptions(),
    )
    return read(data, request)


def resolve_date(
    path: str, parsed: ParsedDocument, mtime_ns: int, fallback: tuple[date, str] | None = None
) -> tuple[date, str]:
    """The document's date and where it came from. The file name wins; a date
    the content gives refines it when it is more precise within the same month
    ("aug2026" in the name, "August 18, 2026" in the heading). The file's mtime
    is the last resort and is marked weak: it orders versions, never shows."""
    named = date_from_filename(PurePosixPath(path).stem)
    content, source = parsed.content_date, parsed.content_date_source
    if named:
        if (
            content
            and named.precision == "month"
            and parsed.content_date_precision == "day"
            and (content.year, content.month) == (named.value.year, named.value.month)
        ):
            return content, source
        return named.value, Document.DateSource.FILENAME
    if content:
        return content, source
    if fallback is not None:
        return fallback
    moment = datetime.fromtimestamp(mtime_ns / 1e9, tz=UTC)
    return timezone.localtime(moment).date(), Document.DateSource.MTIME


# The embed header carries a note's aliases and description (frontmatter) too,
# cut so that the header leaves the model most of its tokens for the passage.
HEADER_ALIASES_CHARS = 200
HEADER_DESCRIPTION_CHARS = 300


def embed_header(title: str, parsed: ParsedDocument) -> str:
    """Title (and authors for papers, the record line for records, a note's
    aliases and description) embedded with every chunk."""
    parts = [title]
    if parsed.authors:
        parts[0] = f"{title} — {parsed.authors}"
    extra = parsed.record.extra
    if extra.get("x_aliases"):
        parts[0] += f" ({str(extra['x_aliases'])[:HEADER_ALIASES_CHARS]})"
    record = parsed.record.header()
    if record:
        parts.append(record)
    if extra.get("x_description"):
        parts.append(str(extra["x_description"])[:HEADER_DESCRIPTION_CHARS])
    # Chunk.header holds 800 characters: hash what is stored.
    return " · ".join(p for p in parts if p)[:800]


def figure_chunk(figure: Figure, description: str) -> ChunkDraft | None:
    """A figure as a passage: `[FIGURE p.N] caption — description` (either part
    may be missing; a figure with neither is not indexed), a photo as `[PHOTO] …`."""
    if figure.kind == "photo":
        if not description:
            return None
        return ChunkDraft(text=f"[PHOTO] {description}", page=1, annotation="photo")
    parts = [part for part in (figure.caption, description) if part]
    if not parts:
        return None
    text = f"[FIGURE p.{figure.page}] " + " — ".join(parts)
    return ChunkDraft(
        text=text, section=f"Page {figure.page}", page=figure.page, annotation="figure"
    )


def all_chunks(parsed: ParsedDocument) -> list[ChunkDraft]:
    """The parsed chunks, then one per figure (with its description, if one was made)."""
    figures = [figure_chunk(f, parsed.descriptions.get(f.image_hash, "")) for f in parsed.figures]
    return [*parsed.chunks, *(chunk for chunk in figures if chunk is not None)]


def prepare(parsed: ParsedDocument, title: str) -> list[tables.PreparedChunk]:
    header = embed_header(title, parsed)
    return [
        tables.PreparedChunk(
            draft=draft,
            header=header,
            text_hash=tables.text_hash(header, draft.section, draft.text),
        )
        for draft in all_chunks(parsed)
    ]


# Passages per embedding call when progress is reported: a large document's
# page says how far embedding has got, and a cancel is noticed between slices.
EMBED_SLICE = 256
# Passages per embedding call in the bulk lane (a folder sync, a reindex): an
# upload waits behind at most one of these (EmbeddingTurnstile), about a
# second of the default model on two cores.
BULK_SLICE = 64


def embed_in_slices(
    embedder: Embedder,
    texts: Sequence[str],
    progress: Callable[[int, int], None] | None = None,
    *,
    lane: str = INTERACTIVE,
) -> list:
    """The vectors of `texts`, each call taking its turn in `lane` (bulk work
    yields to interactive work between slices: EmbeddingTurnstile). With
    `progress`, embedded EMBED_SLICE at a time and `progress(done, total)`
    called after each slice (it may raise to stop); the bulk lane is always
    sliced, BULK_SLICE at a time."""
    size = BULK_SLICE if lane == BULK else EMBED_SLICE
    if len(texts) <= size or (progress is None and lane != BULK):
        with turnstile.turn(lane):
            return list(embedder.embed_passages(list(texts)))
    vectors: list = []
    for start in range(0, len(texts), size):
        with turnstile.turn(lane):
            vectors.extend(embedder.embed_passages(list(texts[start : start + size])))
        if progress is not None:
            progress(len(vectors), len(texts))
    return vectors


def embed_missing(
    prepared: list[tables.PreparedChunk],
    *,
    embedder: Embedder,
    source: Source,
    progress: Callable[[int, int], None] | None = None,
    lane: str = INTERACTIVE,
) -> int:
    """Fill in vectors, reusing the source's stored ones for unchanged text.
    Returns how many were computed. `progress`, `lane`: see embed_in_slices."""
    among = Chunk.objects.filter(document__source=source)
    known = tables.known_vectors((p.text_hash for p in prepared), among=among)
    todo: dict[str, list[tables.PreparedChunk]] = {}
    for p in prepared:
        if p.text_hash in known:
            p.vector = known[p.text_hash]
        else:
            todo.setdefault(p.text_hash, []).append(p)  # identical text embeds once
    if todo:
        firsts = [group[0] for group in todo.values()]
        texts = [tables.embed_text(p.header, p.draft.section, p.draft.text) for p in firsts]
        vectors = embed_in_slices(embedder, texts, progress, lane=lane)
        for group, vector in zip(todo.values(), vectors, strict=True):
            for p in group:
                p.vector = vector
    return len(todo)


@dataclass
class Outcome:
    document: Document
    embedded: int
    rows: int


def apply_parsed(
    document: Document,
    *,
    source: Source,
    parsed: ParsedDocument,
    prepared: list[tables.PreparedChunk],
    path: str,
    mtime_ns: int,
    date_override: tuple[date, str] | None = None,
    date_fallback: tuple[date, str] | None = None,
) -> int:
    """Write a parsed document: fields, tags, chunks and index rows, in one transaction.
    Jarvis's own fields (source, path, privacy) are set here, after everything
    the file said about itself, so frontmatter can never override them. Fields a
    person corrected by hand (`document.edited`) keep their corrected value."""
    record = parsed.record
    effective, date_source = date_override or resolve_date(path, parsed, mtime_ns, date_fallback)
    edited = set(document.edited or [])
    if "title" not in edited:
        document.title = (parsed.title or humanise(PurePosixPath(path).stem))[:500]
    document.kind = parsed.kind
    document.effective_date = effective
    document.date_source = date_source
    document.category = record.category[:100]
    document.record_status = record.status[:100]
    document.entity = record.entity[:200]
    document.event_date = record.event_date
    document.extra = dict(record.extra)
    if "authors" not in edited:
        document.authors = parsed.authors[:1000]
    if "doi" not in edited:
        document.doi = parsed.doi[:200]
    if parsed.site:
        document.site = parsed.site[:200]
    document.warnings = list(parsed.warnings)
    document.ocr = (
        {"pages": parsed.ocr_pages, "empty": parsed.ocr_empty_pages} if parsed.ocr_pages else {}
    )
    document.progress = ""
    document.status = Document.Status.READY
    document.error = ""
    document.indexed_at = timezone.now()
    # Jarvis's own fields last.
    document.source = source
    document.path = path
    document.in_private_dir = under(path, source.private_dirs)
    with transaction.atomic():
        keep_queue_token(document)
        document.save()
        rows = 1 + _set_tags(document, record.tags)
        rows += tables.replace_chunks(document, prepared)
    return rows


def _set_tags(document: Document, tags: list[str]) -> int:
    current = set(document.tag_rows.values_list("tag", flat=True))
    wanted = set(tags)
    if current == wanted:
        return 0
    DocumentTag.objects.filter(document=document).exclude(tag__in=wanted).delete()
    DocumentTag.objects.bulk_create(
        [DocumentTag(document=document, tag=t) for t in wanted - current], ignore_conflicts=True
    )
    return len(current ^ wanted)


def mark_failed(document: Document, *, source: Source, path: str, reason: str) -> int:
    """A file that cannot be indexed: kept as a failed document with its reason
    (shown in the library), its old chunks removed so nothing stale is found."""
    document.status = Document.Status.FAILED
    document.error = reason
    document.progress = ""
    document.source = source
    document.path = path
    document.in_private_dir = under(path, source.private_dirs)
    if not document.title:
        document.title = humanise(PurePosixPath(path).stem)
    if not document.kind:
        document.kind = Document.Kind.NOTE
    with transaction.atomic():
        keep_queue_token(document)
        document.save()
        rows = 1 + tables.replace_chunks(document, [])
    return rows


def keep_queue_token(document: Document) -> None:
    # The token moves only by UPDATE (a cancel or a retry from the web); a
    # whole-row save from a copy loaded earlier must not move it back.
    if document.pk is not None:
        current = Document.objects.filter(pk=document.pk).values_list("queue_token", flat=True)
        document.queue_token = current.first() or 0
