"""`kb doctor`: is the library's index healthy, and what to do if not.

Checks that the keyword table, the vector tables and the Chunk rows agree
(orphans either way), that the recorded embedding model is the configured
one, that folder sources exist and are readable, that no document is stuck
in `pending`/`parsing` (a worker killed mid-ingest), and that the embedding
model suits the languages the library is written in. Each finding says how to
fix it; the safe fixes (dropping orphan index rows, re-embedding chunks that
lost their vectors, re-queueing stuck documents) are applied with `--fix`.
"""

from __future__ import annotations

import os
import sqlite3  # settings put the extension-capable sqlean behind this name
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

from django.db import connection, transaction
from django.utils import timezone

from apps.core.sqlite_ext import load_sqlite_vec
from apps.library.index import fts, tables
from apps.library.index.embeddings import configured_model, get_embedder
from apps.library.languages import embedding_model_advice
from apps.library.models import Chunk, Document, Source
from apps.library.tasks import ingest_queue

STUCK_AFTER = timedelta(minutes=30)


@dataclass
class Finding:
    check: str
    ok: bool
    message: str
    fix: str = ""
    apply: Callable[[], str] | None = field(default=None, repr=False)


def _ids(sql: str) -> set[int]:
    with connection.cursor() as cursor:
        cursor.execute(sql)
        return {row[0] for row in cursor.fetchall()}


def check_index() -> list[Finding]:
    state = tables.index_state()
    chunks = set(Chunk.objects.values_list("id", flat=True))
    kinds = {
        "keyword": _ids(f"SELECT rowid FROM {tables.FTS_TABLE}"),
        "vector": _ids(f"SELECT chunk_id FROM {tables.emb_table(state.generation)}"),
        "bit-code": _ids(f"SELECT chunk_id FROM {tables.vec_table(state.generation)}"),
    }
    findings = []
    for name, ids in kinds.items():
        orphans = ids - chunks
        missing = chunks - ids
        if orphans:
            findings.append(
                Finding(
                    "index",
                    False,
                    f"{len(orphans)} {name} rows belong to no passage",
                    "drop them (safe)",
                    lambda orphans=orphans: _drop_orphans(orphans),
                )
            )
        if missing:
            findings.append(
                Finding(
                    "index",
                    False,
                    f"{len(missing)} passages have no {name} row",
                    "rebuild their index rows from the stored text (safe)",
                    lambda missing=missing: _rebuild(missing),
                )
            )
    if not findings:
        findings.append(
            Finding("index", True, f"{len(chunks)} passages, keyword and vector rows agree")
        )
    return findings


def _drop_orphans(ids: set[int]) -> str:
    state = tables.index_state()
    with transaction.atomic(), connection.cursor() as cursor:
        for start in range(0, len(ids), 500):
            batch = sorted(ids)[start : start + 500]
            marks = ",".join("%s" for _ in batch)
            cursor.execute(f"DELETE FROM {tables.FTS_TABLE} WHERE rowid IN ({marks})", batch)
            cursor.execute(
                f"DELETE FROM {tables.emb_table(state.generation)} WHERE chunk_id IN ({marks})",
                batch,
            )
            cursor.execute(
                f"DELETE FROM {tables.vec_table(state.generation)} WHERE chunk_id IN ({marks})",
                batch,
            )
    return f"dropped index rows of {len(ids)} missing passages"


def _rebuild(ids: set[int]) -> str:
    """Re-create every index row of these chunks from their stored text."""
    state = tables.index_state()
    chunks = list(Chunk.objects.filter(id__in=ids).select_related("document"))
    vectors = get_embedder().embed_passages(
        [tables.embed_text(c.header, c.section, c.text) for c in chunks]
    )
    with transaction.atomic():
        _drop_orphans({c.id for c in chunks})
        fts.insert_chunks(chunks)
        tables.insert_vectors(chunks, list(vectors), state)
    return f"rebuilt the index rows of {len(chunks)} passages"


def check_model() -> list[Finding]:
    state = tables.index_state()
    spec = configured_model()
    if (state.model_name, state.dimension) == (spec.name, spec.dimension):
        return [Finding("model", True, f"vectors made with the configured model {spec.name}")]
    return [
        Finding(
            "model",
            False,
            f"vectors were made with {state.model_name} ({state.dimension}d), "
            f"{spec.name} ({spec.dimension}d) is configured",
            "run `manage.py reindex` (re-embeds every passage; search is blocked until then)",
        )
    ]


def check_languages() -> list[Finding]:
    advice = embedding_model_advice()
    if advice is None:
        return [Finding("languages", True, "the embedding model suits the library's languages")]
    return [Finding("languages", False, advice.problem, advice.fix)]


def check_sources() -> list[Finding]:
    findings = []
    for source in Source.objects.filter(kind__in=[Source.Kind.VAULT, Source.Kind.INBOX]):
        folder = Path(source.root_path)
        if not folder.is_dir():
            problem = "is missing"
        elif not os.access(folder, os.R_OK | os.X_OK):
            problem = "is not readable by the Jarvis user"
        else:
            continue
        findings.append(
            Finding(
                "sources",
                False,
                f"folder of “{source.name}” ({source.owner}) {problem}: {folder}",
                "mount or restore the folder, fix its permissions, or delete the source in admin",
            )
        )
    return findings or [Finding("sources", True, "every folder source exists and is readable")]


def check_stuck() -> list[Finding]:
    cutoff = timezone.now() - STUCK_AFTER
    stuck = list(
        Document.objects.filter(
            status__in=[Document.Status.PENDING, Document.Status.PARSING], updated_at__lt=cutoff
        )
    )
    if not stuck:
        return [Finding("ingest", True, "no document is stuck while being added")]
    return [
        Finding(
            "ingest",
            False,
            f"{len(stuck)} documents have been pending or parsing for over "
            f"{int(STUCK_AFTER.total_seconds() // 60)} minutes (a worker stopped mid-ingest?)",
            "queue them again (safe)",
            lambda stuck=stuck: _requeue(stuck),
        )
    ]


def _requeue(documents: list[Document]) -> str:
    for document in documents:
        Document.objects.filter(pk=document.pk).update(status=Document.Status.PENDING)
        ingest_queue(document, notify=False)
    return f"queued {len(documents)} documents again"


def probe_vectors(database: str, generation: int, code_bits: int) -> str:
    """Count and query the vector tables of `database` with a fresh connection
    (run in a child process by `kb doctor`, so a crash cannot take the shell)."""
    connection_ = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    try:
        load_sqlite_vec(connection_)
        codes = connection_.execute(
            f"SELECT count(*) FROM {tables.vec_table(generation)}"
        ).fetchone()[0]
        vectors = connection_.execute(
            f"SELECT count(*) FROM {tables.emb_table(generation)}"
        ).fetchone()[0]
        row = connection_.execute(
            f"SELECT part FROM {tables.vec_table(generation)} LIMIT 1"
        ).fetchone()
        if row is not None:
            connection_.execute(
                f"SELECT chunk_id FROM {tables.vec_table(generation)} "
                "WHERE bits MATCH vec_bit(?) AND k = 1 AND part = ?",
                [bytes(code_bits // 8), row[0]],
            ).fetchall()
    finally:
        connection_.close()
    return f"vector index readable: {vectors} vectors, {codes} codes"
