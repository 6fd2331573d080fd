"""The retrieval legs over the privacy-filtered pool: FTS5 bm25 over the
chunk's title, headings, path words, record fields and text (weighted apart,
apps.library.index.fts), and sqlite-vec KNN whose scan is restricted to the
partitions the person may see (the filter is inside the KNN query, not applied
after it). The record leg (apps.library.search.records) is the third."""

from __future__ import annotations

import functools
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from django.db import connection

from apps.library.index import tables
from apps.library.index.fts import FTS_TABLE, WEIGHTS
from apps.library.index.tables import emb_table, to_codes, vec_table
from apps.library.search.query import keyword_query, prune_common_terms, query_terms, where_sql
from apps.library.search.spelling import with_corrections

LEG_DEPTH = 50  # candidates each leg contributes to the fusion


BIT_CANDIDATES = 16  # per partition (bucket), from the bit-code first pass


RESCORE_CANDIDATES = 400  # best bit matches re-scored with float vectors


KNN_THREADS = 2  # the bit-code scan is split across this many threads


KEYWORD_PREFILTER = 1000  # best bm25 matches joined to the privacy filter first


def keyword_leg(query: str, pools, filters, latest_only) -> list[int]:
    terms = query_terms(query)
    if not terms:
        return []
    # A word the index does not hold at all may be a typo: its near spellings join.
    expression = keyword_query(query, with_corrections(prune_common_terms(terms))).expression()
    where, params = where_sql(pools, filters, latest_only)
    ids = _keyword_sql(expression, where, params, prefilter=KEYWORD_PREFILTER)
    if len(ids) < LEG_DEPTH and _matches_more_than(expression, KEYWORD_PREFILTER):
        # Most of the best matches were outside this person's pools or filters:
        # score every match (slower, rare).
        ids = _keyword_sql(expression, where, params, prefilter=None)
    return ids


def _keyword_sql(expression: str, where: str, params: list, *, prefilter: int | None) -> list[int]:
    """The best LEG_DEPTH matches inside the pools. With `prefilter`, bm25 picks
    that many best matches first and only those are joined to the privacy and
    filter tables: joining every match of a common word costs more than
    scoring it."""
    weights = ", ".join(str(w) for w in WEIGHTS)
    if prefilter:
        source = (
            f"(SELECT rowid, bm25({FTS_TABLE}, {weights}) AS score FROM {FTS_TABLE} "
            f"WHERE {FTS_TABLE} MATCH %s ORDER BY score LIMIT {int(prefilter)}) f"
        )
        match, order = "", "f.score"
    else:
        source = f"{FTS_TABLE} f"
        match, order = f"{FTS_TABLE} MATCH %s AND ", f"bm25({FTS_TABLE}, {weights})"
    sql = (
        f"SELECT f.rowid FROM {source} "
        "JOIN library_chunk c ON c.id = f.rowid "
        "JOIN library_document d ON d.id = c.document_id "
        f"WHERE {match}{where} ORDER BY {order} LIMIT {LEG_DEPTH}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [expression, *params])
        return [row[0] for row in cursor.fetchall()]


def _matches_more_than(expression: str, count: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT count(*) FROM (SELECT 1 FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s "
            f"LIMIT {int(count) + 1})",
            [expression],
        )
        return cursor.fetchone()[0] > count


def vector_leg(vector: np.ndarray, pools, filters, latest_only, state) -> list[int]:
    generation = state.generation
    if filters.narrows_beyond_sources:
        return _exact_filtered_knn(vector, pools, filters, latest_only, generation)
    partitions = [p for pool in pools for p in pool.partitions(latest_only, state.buckets)]
    if not partitions:
        return []
    (bits,) = to_codes([vector], state)
    candidates = _scan_partitions(vec_table(generation), partitions, bits)
    candidates.sort(key=lambda row: row[1])
    connection.ensure_connection()
    raw = connection.connection
    ids = [row[0] for row in candidates[:RESCORE_CANDIDATES]]
    if not ids:
        return []
    rows = raw.execute(
        f"SELECT chunk_id, vector FROM {emb_table(generation)} "
        f"WHERE chunk_id IN ({','.join('?' * len(ids))})",
        ids,
    ).fetchall()
    matrix = np.frombuffer(b"".join(blob for _, blob in rows), dtype=np.float32)
    matrix = matrix.reshape(len(rows), -1)
    scores = matrix @ vector
    order = np.argsort(-scores)[:LEG_DEPTH]
    return [rows[i][0] for i in order]


_scan_pool = ThreadPoolExecutor(max_workers=KNN_THREADS, thread_name_prefix="jarvis-knn")


def _scan_partitions(table: str, partitions: list[int], bits: bytes) -> list[tuple[int, float]]:
    """Bit-code KNN over `partitions`, split across threads. sqlite releases the
    GIL while it scans, so on two cores two halves take half the time, the way
    numpy's BLAS scan uses both cores. Inside a transaction the caller's own
    connection is used (other connections could not see its writes)."""
    if connection.in_atomic_block or KNN_THREADS == 1 or len(partitions) < 2 * KNN_THREADS:
        return _scan(table, partitions, bits)
    groups = [partitions[i::KNN_THREADS] for i in range(KNN_THREADS)]
    futures = [_scan_pool.submit(_scan_in_thread, table, group, bits) for group in groups]
    return [row for future in futures for row in future.result()]


def _scan_in_thread(table: str, partitions: list[int], bits: bytes) -> list[tuple[int, float]]:
    # Each pool thread keeps its own Django connection (connections are per thread).
    return _scan(table, partitions, bits)


def _scan(table: str, partitions: list[int], bits: bytes) -> list[tuple[int, float]]:
    params: list = []
    for part in partitions:
        params += [bits, BIT_CANDIDATES, part]
    # Django's cursor wrapper is bypassed: this runs on every search and its
    # placeholder rewriting of a long UNION costs more than a small library's scan.
    connection.ensure_connection()
    return connection.connection.execute(_knn_sql(table, len(partitions)), params).fetchall()


@functools.lru_cache(maxsize=64)
def _knn_sql(table: str, partitions: int) -> str:
    """One KNN per partition (vec0 filters partitions by equality only), in one
    statement; each scans just the rows of one slice the person may see."""
    part = (
        f"SELECT chunk_id, distance FROM {table} WHERE bits MATCH vec_bit(?) AND k = ? AND part = ?"
    )
    return " UNION ALL ".join(f"SELECT * FROM ({part})" for _ in range(partitions))


def _exact_filtered_knn(vector, pools, filters, latest_only, generation) -> list[int]:
    """With record or tag filters the pool is usually small: score it exactly,
    the filter inside the same query."""
    where, params = where_sql(pools, filters, latest_only)
    sql = (
        f"SELECT c.id FROM library_chunk c JOIN library_document d ON d.id = c.document_id "
        f"JOIN {emb_table(generation)} e ON e.chunk_id = c.id "
        f"WHERE {where} ORDER BY vec_distance_cosine(e.vector, %s) LIMIT {LEG_DEPTH}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, tables.to_blob(vector)])
        return [row[0] for row in cursor.fetchall()]
