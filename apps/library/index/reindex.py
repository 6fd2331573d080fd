"""Re-embedding every chunk into a fresh generation of vector tables.

Used when the configured embedding model changes (or to rebuild codes). The
new generation is filled from the stored chunk text while the old one keeps
serving; the swap is one transaction that moves the IndexState pointer, so
readers see either the old index or the new one, never a mix.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from django.db import connection, transaction
from django.utils import timezone

from apps.core.errors import Conflict
from apps.library.index import tables
from apps.library.index.embeddings import (
    BULK,
    Embedder,
    configured_model,
    get_embedder,
    turnstile,
)
from apps.library.models import Chunk, IndexState

logger = logging.getLogger(__name__)

BATCH = 64


@dataclass
class ReindexReport:
    chunks: int
    generation: int
    model: str


def reindex(
    *,
    embedder: Embedder | None = None,
    progress: Callable[[int, int], None] | None = None,
    force: bool = False,
) -> ReindexReport:
    spec = configured_model()
    embedder = embedder or get_embedder(spec.name)
    state = tables.index_state()
    with transaction.atomic():
        state = IndexState.objects.select_for_update().get(pk=state.pk)
        if state.reindexing_since and not force:
            raise Conflict(
                f"a reindex has been running since {state.reindexing_since:%Y-%m-%d %H:%M}; "
                "wait for it, or pass --force if it died"
            )
        state.reindexing_since = timezone.now()
        state.save(update_fields=["reindexing_since"])
    new = state.generation + 1
    tables.drop_generation_tables(new)  # leftovers of a reindex that died
    tables.create_generation_tables(new, state.code_bits)
    try:
        done = _fill(new, state, embedder, progress)
        with transaction.atomic():
            done += _fill(new, state, embedder, progress, after=done)  # chunks added meanwhile
            _drop_orphans(new)
            IndexState.objects.filter(pk=state.pk).update(
                model_name=spec.name,
                dimension=spec.dimension,
                generation=new,
                reindexing_since=None,
            )
    except BaseException:
        IndexState.objects.filter(pk=state.pk).update(reindexing_since=None)
        tables.drop_generation_tables(new)
        raise
    tables.drop_generation_tables(state.generation)
    logger.info("reindexed %s chunks with %s into generation %s", done, spec.name, new)
    return ReindexReport(chunks=done, generation=new, model=spec.name)


def _fill(generation: int, state: IndexState, embedder, progress, after: int = 0) -> int:
    """Embed every chunk not yet in the new generation. Short transactions:
    read a batch, embed it with no transaction open, write it."""
    done = 0
    table = tables.emb_table(generation)
    total = Chunk.objects.count()
    last_id = 0
    while True:
        batch = list(
            Chunk.objects.filter(id__gt=last_id).select_related("document").order_by("id")[:BATCH]
        )
        if not batch:
            return done
        last_id = batch[-1].id
        with connection.cursor() as cursor:
            marks = ",".join("%s" for _ in batch)
            cursor.execute(
                f"SELECT chunk_id FROM {table} WHERE chunk_id IN ({marks})", [c.id for c in batch]
            )
            present = {row[0] for row in cursor.fetchall()}
        todo = [c for c in batch if c.id not in present]
        if not todo:
            continue
        with turnstile.turn(BULK):  # an upload meanwhile goes first (EmbeddingTurnstile)
            vectors = embedder.embed_passages(
                [tables.embed_text(c.header, c.section, c.text) for c in todo]
            )
        target = IndexState(
            code_bits=state.code_bits,
            code_seed=state.code_seed,
            buckets=state.buckets,
            generation=generation,
        )
        with transaction.atomic():
            tables.insert_vectors(todo, list(vectors), target)
        done += len(todo)
        if progress:
            progress(after + done, total)


def _drop_orphans(generation: int) -> None:
    with connection.cursor() as cursor:
        for table in (tables.emb_table(generation), tables.vec_table(generation)):
            cursor.execute(
                f"DELETE FROM {table} WHERE chunk_id NOT IN (SELECT id FROM library_chunk)"
            )
