"""The search index beside the Chunk rows: FTS5 for keywords, sqlite-vec for vectors.

Three tables mirror Chunk rows and are written only here, always inside the
caller's transaction together with the Chunk rows themselves:

- `library_chunk_fts` (FTS5): title, section, path words, record fields and
  chunk text in separate columns bm25 weighs apart (apps.library.index.fts).
- `library_vec_<gen>` (vec0): one bit-quantised vector per chunk, partitioned
  by `partition_for(source, private, latest)` (private: a private folder's or a
  private section's chunk). The KNN leg scans only the partitions a person may
  see, so the privacy filter is inside the KNN query.
- `library_emb_<gen>`: the float32 vectors, to re-score the bit candidates
  exactly, to rebuild partitions without re-embedding, and for filtered exact scans.

`<gen>` is the live generation in IndexState: `reindex` fills a new
generation and swaps the pointer in one transaction.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Protocol

import numpy as np
from django.db import connection, transaction
from django.db.models import QuerySet

from apps.library.index import codes, fts
from apps.library.index.embeddings import EmbeddingUnavailable, configured_model, model_spec
from apps.library.models import Chunk, Document, IndexState

# The storage names live in apps.library.vectors, below the version rules that
# read vectors back; the index's own importers keep finding them here.
from apps.library.vectors import emb_table, from_blob, to_blob


class ChunkDraft(Protocol):
    """What the index stores of a parsed passage. The parsers' `ChunkDraft`
    dataclass has this shape; the index names only the shape, so it never
    imports the ingest package that writes through it."""

    text: str
    section: str
    page: int | None
    annotation: str
    section_date: date | None
    private: bool
    origin: str
    anchors: dict[str, int]
    links: list  # of BlockLink (start, end, target, block)


FTS_TABLE = fts.FTS_TABLE
_VEC_INSERT = "INSERT INTO {table}(chunk_id, part, bits) VALUES (%s, %s, vec_bit(%s))"


class IndexMismatch(EmbeddingUnavailable):
    """The vectors on disk were made by a model this instance cannot load."""


def vec_table(generation: int) -> str:
    return f"library_vec_{int(generation)}"


def slice_key(source_id: int, private: bool, latest: bool) -> int:
    """One privacy slice of the vector table: a source's private-folder or other
    chunks, latest versions or older ones."""
    return (source_id * 2 + (1 if private else 0)) * 2 + (1 if latest else 0)


def partition_for(source_id: int, private: bool, latest: bool, chunk_id: int, buckets: int) -> int:
    """The vec0 partition of a chunk: its slice, split by chunk id into buckets.
    vec0's KNN keeps a sorted top-k while it scans and that costs more per row
    as k grows; many small partitions each with a small k find the same
    neighbours faster than one big scan with a big k."""
    return slice_key(source_id, private, latest) * buckets + chunk_id % buckets


def slice_partitions(source_id: int, private: bool, latest: bool, buckets: int) -> list[int]:
    base = slice_key(source_id, private, latest) * buckets
    return list(range(base, base + buckets))


def create_generation_tables(generation: int, code_bits: int) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {vec_table(generation)} USING vec0("
            "chunk_id integer primary key, part integer partition key, "
            f"bits bit[{int(code_bits)}], chunk_size=512)"
        )
        cursor.execute(
            f"CREATE TABLE IF NOT EXISTS {emb_table(generation)} "
            "(chunk_id INTEGER PRIMARY KEY, vector BLOB NOT NULL)"
        )


def drop_generation_tables(generation: int) -> None:
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE IF EXISTS {vec_table(generation)}")
        cursor.execute(f"DROP TABLE IF EXISTS {emb_table(generation)}")


def index_state() -> IndexState:
    state = IndexState.objects.filter(pk=1).first()
    if state is None:
        spec = configured_model()
        state, _ = IndexState.objects.get_or_create(
            pk=1, defaults={"model_name": spec.name, "dimension": spec.dimension, "generation": 1}
        )
        create_generation_tables(state.generation, state.code_bits)
    return state


def require_matching_model() -> IndexState:
    """The live index, when its vectors' model can be loaded here. Search and
    sync embed with that model: an admin choosing another one changes nothing
    until `reindex` swaps in a generation built with it."""
    state = index_state()
    try:
        spec = model_spec(state.model_name)
    except EmbeddingUnavailable as exc:
        raise IndexMismatch(
            f"the index was built with {state.model_name} ({state.dimension}d), which this "
            f"instance cannot load ({exc}): run `manage.py reindex`"
        ) from None
    if spec.dimension != state.dimension:
        raise IndexMismatch(
            f"the index holds {state.dimension}d vectors but {spec.name} makes "
            f"{spec.dimension}d ones: run `manage.py reindex`"
        )
    return state


def text_hash(header: str, section: str, text: str) -> str:
    return hashlib.sha256(f"{header}\x1f{section}\x1f{text}".encode()).hexdigest()


def embed_text(header: str, section: str, text: str) -> str:
    """What the model reads: the document's header and the section breadcrumb
    ride along with every chunk, so a query naming the document or section
    matches any chunk of it."""
    lead = " · ".join(part for part in (header, section) if part)
    return f"{lead}\n{text}" if lead else text


def to_codes(vectors, state: IndexState) -> list[bytes]:
    """Bit codes for the vec0 first pass (apps.library.index.codes)."""
    if len(vectors) == 0:
        return []
    packed = codes.encode(np.vstack(vectors), code_bits=state.code_bits, seed=state.code_seed)
    return [row.tobytes() for row in packed]


@dataclass
class PreparedChunk:
    draft: ChunkDraft
    header: str
    text_hash: str
    vector: np.ndarray | None = None  # filled by the embedder (or reused)


def known_vectors(hashes: Iterable[str], *, among: QuerySet[Chunk]) -> dict[str, np.ndarray]:
    """Vectors already stored for these text hashes among `among` (e.g. the
    source's chunks), so an edited note re-embeds only the text that changed."""
    wanted = set(hashes)
    if not wanted:
        return {}
    generation = index_state().generation
    rows = among.filter(text_hash__in=wanted).values_list("id", "text_hash").order_by()
    by_id = dict(rows)
    if not by_id:
        return {}
    found: dict[str, np.ndarray] = {}
    for chunk_id, blob in stored_vectors(list(by_id), generation).items():
        found.setdefault(by_id[chunk_id], from_blob(blob).copy())
    return found


def stored_vectors(chunk_ids: Sequence[int], generation: int) -> dict[int, bytes]:
    """The stored float vectors (as blobs) of these chunks, in batches."""
    vectors: dict[int, bytes] = {}
    with connection.cursor() as cursor:
        for start in range(0, len(chunk_ids), 500):
            batch = list(chunk_ids[start : start + 500])
            marks = ",".join("%s" for _ in batch)
            cursor.execute(
                f"SELECT chunk_id, vector FROM {emb_table(generation)} WHERE chunk_id IN ({marks})",
                batch,
            )
            vectors.update(dict(cursor.fetchall()))
    return vectors


def _delete_rows(chunk_ids: Sequence[int], generation: int) -> int:
    if not chunk_ids:
        return 0
    with connection.cursor() as cursor:
        for start in range(0, len(chunk_ids), 500):
            batch = list(chunk_ids[start : start + 500])
            marks = ",".join("%s" for _ in batch)
            cursor.execute(f"DELETE FROM {FTS_TABLE} WHERE rowid IN ({marks})", batch)
            cursor.execute(
                f"DELETE FROM {vec_table(generation)} WHERE chunk_id IN ({marks})", batch
            )
            cursor.execute(
                f"DELETE FROM {emb_table(generation)} WHERE chunk_id IN ({marks})", batch
            )
    return len(chunk_ids) * 3


def chunk_latest_flags(document: Document, section_dates: Sequence[date | None]) -> list[bool]:
    """Chunk-level "latest": the document is the newest of its family and, in a
    file of dated sections, the chunk sits in the newest section (or in an
    undated one, which nothing supersedes)."""
    dates = [d for d in section_dates if d]
    newest = max(dates) if dates else None
    return [document.is_latest and (d is None or d == newest) for d in section_dates]


def chunk_marks(draft: ChunkDraft) -> dict:
    """What Chunk.marks stores of a passage's block anchors and links ({} for most)."""
    marks: dict = {}
    if draft.anchors:
        marks["anchors"] = dict(draft.anchors)
    if draft.links:
        marks["links"] = [[k.start, k.end, k.target, k.block] for k in draft.links]
    return marks


def replace_chunks(document: Document, prepared: Sequence[PreparedChunk]) -> int:
    """Swap a document's chunks and their index rows. Must run inside a
    transaction; returns how many rows it wrote or deleted."""
    assert connection.in_atomic_block, "replace_chunks must run inside transaction.atomic()"
    state = index_state()
    generation = state.generation
    old_ids = list(document.chunks.values_list("id", flat=True))
    written = _delete_rows(old_ids, generation)
    if old_ids:
        Chunk.objects.filter(id__in=old_ids).delete()
        written += len(old_ids)
    flags = chunk_latest_flags(document, [p.draft.section_date for p in prepared])
    rows = [
        Chunk(
            document=document,
            ordinal=ordinal,
            section=p.draft.section[:500],
            text=p.draft.text,
            header=p.header[:800],
            text_hash=p.text_hash,
            page=p.draft.page,
            annotation=p.draft.annotation,
            section_date=p.draft.section_date,
            origin=p.draft.origin,
            is_latest=latest,
            private=p.draft.private,
            marks=chunk_marks(p.draft),
        )
        for ordinal, (p, latest) in enumerate(zip(prepared, flags, strict=True))
    ]
    created = Chunk.objects.bulk_create(rows)
    _insert_rows(document, created, [p.vector for p in prepared], state)
    return written + len(created) * 4


def _insert_rows(document: Document, chunks: Sequence[Chunk], vectors, state: IndexState) -> None:
    for chunk in chunks:
        chunk.document = document
    fts.insert_chunks(chunks)
    insert_vectors(chunks, vectors, state)


def insert_vectors(chunks: Sequence[Chunk], vectors, state: IndexState) -> None:
    """Write float vectors and bit codes for `chunks` (their `document` loaded)
    into the generation `state` names."""
    bit_codes = to_codes(vectors, state)
    with connection.cursor() as cursor:
        cursor.executemany(
            f"INSERT INTO {emb_table(state.generation)}(chunk_id, vector) VALUES (%s, %s)",
            [(c.id, to_blob(v)) for c, v in zip(chunks, vectors, strict=True)],
        )
        cursor.executemany(
            _VEC_INSERT.format(table=vec_table(state.generation)),
            [
                (
                    c.id,
                    partition_for(
                        c.document.source_id,
                        c.owner_only,
                        c.is_latest,
                        c.id,
                        state.buckets,
                    ),
                    code,
                )
                for c, code in zip(chunks, bit_codes, strict=True)
            ],
        )


def delete_document(document: Document) -> int:
    """Remove a document with its chunks and every index row, in one transaction."""
    with transaction.atomic():
        generation = index_state().generation
        ids = list(document.chunks.values_list("id", flat=True))
        written = _delete_rows(ids, generation) + len(ids)
        document.delete()
    return written + 1


def repartition(document: Document) -> int:
    """Re-file a document's vectors after its latest/private flags changed.
    Uses the stored float vectors: nothing is re-embedded. Caller's transaction."""
    assert connection.in_atomic_block, "repartition must run inside transaction.atomic()"
    state = index_state()
    generation = state.generation
    chunks = list(document.chunks.only("id", "section_date", "is_latest", "private"))
    flags = chunk_latest_flags(document, [c.section_date for c in chunks])
    changed = [c for c, flag in zip(chunks, flags, strict=True) if c.is_latest != flag]
    for chunk, flag in zip(chunks, flags, strict=True):
        chunk.is_latest = flag
    if changed:
        Chunk.objects.bulk_update(changed, ["is_latest"])
    ids = [c.id for c in chunks]
    if not ids:
        return len(changed)
    vectors = stored_vectors(ids, generation)
    with connection.cursor() as cursor:
        for start in range(0, len(ids), 500):
            batch = ids[start : start + 500]
            marks = ",".join("%s" for _ in batch)
            cursor.execute(
                f"DELETE FROM {vec_table(generation)} WHERE chunk_id IN ({marks})", batch
            )
        kept = [c for c in chunks if c.id in vectors]
        bit_codes = to_codes([from_blob(vectors[c.id]) for c in kept], state)
        cursor.executemany(
            _VEC_INSERT.format(table=vec_table(generation)),
            [
                (
                    c.id,
                    partition_for(
                        document.source_id,
                        document.in_private_dir or c.private,
                        c.is_latest,
                        c.id,
                        state.buckets,
                    ),
                    code,
                )
                for c, code in zip(kept, bit_codes, strict=True)
            ],
        )
    return len(changed) + 2 * len(ids)


def clear_all() -> None:
    """Empty every index table (tests' teardown after a flush of Chunk rows)."""
    state = IndexState.objects.filter(pk=1).first()
    generation = state.generation if state else 1
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {FTS_TABLE}")
        cursor.execute(f"DELETE FROM {vec_table(generation)}")
        cursor.execute(f"DELETE FROM {emb_table(generation)}")
