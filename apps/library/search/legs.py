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
from apps.library.search.query import (
    keyword_query,
    pool_sql,
    prune_common_terms,
    query_terms,
    where_sql,
)
from apps.library.search.spelling import with_corrections

LEG_DEPTH = 50  # candidates each leg contributes to the fusion


BIT_CANDIDATES = 16  # per partition (bucket), from the bit-code first pass


RESCORE_CANDIDATES = 400  # best bit matches re-scored with float vectors


KNN_THREADS = 2  # the bit-code scan is split across this many threads


KEYWORD_PREFILTER = 1000  # best bm25 matches joined to the privacy filter first


# A search may rank for several views at once: a cloud model's turn needs
# what that model may read ("answer") and, for the hold-back rule, everything
# the person may read. Each leg scans once over the union of the views' pools
# and keeps each view's own best LEG_DEPTH exactly, as if it had run alone:
# the union is cut into cells (pools that belong to the same views), each
# cell keeps its own best LEG_DEPTH, and a view merges the cells it holds.
Views = dict[str, list]  # view name → its pools
ONE = ""  # the view of a plain search


def cells_of(views: Views) -> list[tuple[frozenset[str], list]]:
    """The union of the views' pools cut into cells: (the views a cell belongs
    to, its pools). Views that are one pool set make one cell."""
    names: dict = {}
    for name, pools in views.items():
        for pool in pools:
            names.setdefault(pool, set()).add(name)
    cells: dict[frozenset[str], list] = {}
    for pool, members in names.items():
        cells.setdefault(frozenset(members), []).append(pool)
    return list(cells.items())


def _per_view(views: Views, cells, rows) -> dict[str, list[int]]:
    """Each view's best LEG_DEPTH ids from (id, score, cell index) rows, lower
    score first, ties by id (the same order whichever views ran together)."""
    ranked = {}
    for name in views:
        inside = {i for i, (members, _) in enumerate(cells) if name in members}
        mine = sorted((score, chunk_id) for chunk_id, score, cell in rows if cell in inside)
        ranked[name] = [chunk_id for _, chunk_id in mine[:LEG_DEPTH]]
    return ranked


def keyword_leg(query: str, pools, filters, latest_only) -> list[int]:
    return keyword_legs(query, {ONE: pools}, filters, latest_only)[ONE]


def keyword_legs(query: str, views: Views, filters, latest_only) -> dict[str, list[int]]:
    terms = query_terms(query)
    cells = cells_of(views)
    if not terms or not cells:
        return {name: [] for name in views}
    # A word the index does not hold at all may be a typo: its near spellings join.
    expression = keyword_query(query, with_corrections(prune_common_terms(terms))).expression()
    rows = _keyword_sql(expression, cells, filters, latest_only, prefilter=KEYWORD_PREFILTER)
    ranked = _per_view(views, cells, rows)
    if any(len(ids) < LEG_DEPTH for ids in ranked.values()) and _matches_more_than(
        expression, KEYWORD_PREFILTER
    ):
        # Most of the best matches were outside a view's pools or filters:
        # score every match (slower, rare).
        rows = _keyword_sql(expression, cells, filters, latest_only, prefilter=None)
        ranked = _per_view(views, cells, rows)
    return ranked


def _keyword_sql(expression: str, cells, filters, latest_only, *, prefilter: int | None) -> list:
    """(id, bm25 score, cell) for the best LEG_DEPTH matches of each cell. With
    `prefilter`, bm25 picks that many best matches first and only those are
    joined to the privacy and filter tables: joining every match of a common
    word costs more than scoring it."""
    weights = ", ".join(str(w) for w in WEIGHTS)
    pools = [pool for _, cell_pools in cells for pool in cell_pools]
    where, params = where_sql(pools, filters, latest_only)
    if prefilter:
        source = (
            f"(SELECT rowid, bm25({FTS_TABLE}, {weights}) AS score FROM {FTS_TABLE} "
            f"WHERE {FTS_TABLE} MATCH %s ORDER BY score LIMIT {int(prefilter)}) f"
        )
        match, score = "", "f.score"
    else:
        source = f"{FTS_TABLE} f"
        match, score = f"{FTS_TABLE} MATCH %s AND ", f"bm25({FTS_TABLE}, {weights})"
    joins = (
        "JOIN library_chunk c ON c.id = f.rowid JOIN library_document d ON d.id = c.document_id "
    )
    if len(cells) == 1:
        sql = (
            f"SELECT f.rowid, {score}, 0 FROM {source} {joins}"
            f"WHERE {match}{where} ORDER BY {score}, f.rowid LIMIT {LEG_DEPTH}"
        )
        cell_params: list = []
    else:
        # Which cell a match is in, then each cell's best LEG_DEPTH in one pass.
        cases, cell_params = [], []
        for i, (_, cell_pools) in enumerate(cells):
            in_cell, in_params = pool_sql(cell_pools)
            cases.append(f"WHEN {in_cell} THEN {i}")
            cell_params += in_params
        sql = (
            "SELECT id, score, cell FROM ("
            "SELECT id, score, cell, ROW_NUMBER() OVER "
            "(PARTITION BY cell ORDER BY score, id) AS n FROM ("
            f"SELECT f.rowid AS id, {score} AS score, CASE {' '.join(cases)} END AS cell "
            f"FROM {source} {joins}WHERE {match}{where})) WHERE n <= {LEG_DEPTH}"
        )
    with connection.cursor() as cursor:
        cursor.execute(sql, [*cell_params, expression, *params])
        return cursor.fetchall()


def _matches_more_than(expression: str, count: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT count(*) FROM (SELECT 1 FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s "
            f"LIMIT {int(count) + 1})",
            [expression],
        )
        return cursor.fetchone()[0] > count


def vector_leg(vector: np.ndarray, pools, filters, latest_only, state) -> list[int]:
    return vector_legs(vector, {ONE: pools}, filters, latest_only, state)[ONE]


def vector_legs(vector: np.ndarray, views: Views, filters, latest_only, state) -> dict:
    generation = state.generation
    cells = cells_of(views)
    if filters.narrows_beyond_sources:
        rows = [
            (chunk_id, distance, i)
            for i, (_, cell_pools) in enumerate(cells)
            for chunk_id, distance in _exact_filtered_knn(
                vector, cell_pools, filters, latest_only, generation
            )
        ]
        return _per_view(views, cells, rows)
    cell_of = {
        part: i
        for i, (_, cell_pools) in enumerate(cells)
        for pool in cell_pools
        for part in pool.partitions(latest_only, state.buckets)
    }
    if not cell_of:
        return {name: [] for name in views}
    (bits,) = to_codes([vector], state)
    # Bit distances tie often: ties go by id, so a view's rescored set is
    # the same whichever views ran together.
    found = [
        (chunk_id, distance, cell_of[part])
        for chunk_id, distance, part in _scan_partitions(vec_table(generation), list(cell_of), bits)
    ]
    found.sort(key=lambda row: (row[1], row[0]))
    candidates = {
        name: [chunk_id for chunk_id, _, cell in found if name in cells[cell][0]][
            :RESCORE_CANDIDATES
        ]
        for name in views
    }
    ids = sorted({chunk_id for chosen in candidates.values() for chunk_id in chosen})
    if not ids:
        return {name: [] for name in views}
    connection.ensure_connection()
    rows = connection.connection.execute(
        f"SELECT chunk_id, vector FROM {emb_table(generation)} "
        f"WHERE chunk_id IN ({','.join('?' * len(ids))})",
        ids,
    ).fetchall()
    matrix = np.frombuffer(b"".join(blob for _, blob in rows), dtype=np.float32)
    scores = matrix.reshape(len(rows), -1) @ vector
    row_ids = np.array([row[0] for row in rows], dtype=np.int64)
    ranked = row_ids[np.lexsort((row_ids, -scores))].tolist()  # best first, ties by id
    if len(views) == 1:
        return {name: ranked[:LEG_DEPTH] for name in views}
    ranked_for = {}
    for name, chosen in candidates.items():
        mine = set(chosen)
        ranked_for[name] = [chunk_id for chunk_id in ranked if chunk_id in mine][:LEG_DEPTH]
    return ranked_for


_scan_pool = ThreadPoolExecutor(max_workers=KNN_THREADS, thread_name_prefix="jarvis-knn")


def _scan_partitions(table: str, partitions: list[int], bits: bytes) -> list[tuple]:
    """Bit-code KNN over `partitions`, split across threads. sqlite releases the
    GIL while it scans, so on two cores two halves take half the time, the way
    numpy's BLAS scan uses both cores. Inside a transaction the caller's own
    connection is used (other connections could not see its writes)."""
    if connection.in_atomic_block or KNN_THREADS == 1 or len(partitions) < 2 * KNN_THREADS:
        return _scan(table, partitions, bits)
    groups = [partitions[i::KNN_THREADS] for i in range(KNN_THREADS)]
    futures = [_scan_pool.submit(_scan_in_thread, table, group, bits) for group in groups]
    return [row for future in futures for row in future.result()]


def _scan_in_thread(table: str, partitions: list[int], bits: bytes) -> list[tuple]:
    # Each pool thread keeps its own Django connection (connections are per thread).
    return _scan(table, partitions, bits)


def _scan(table: str, partitions: list[int], bits: bytes) -> list[tuple]:
    params: list = []
    for part in partitions:
        params += [part, bits, BIT_CANDIDATES, part]
    # Django's cursor wrapper is bypassed: this runs on every search and its
    # placeholder rewriting of a long UNION costs more than a small library's scan.
    connection.ensure_connection()
    return connection.connection.execute(_knn_sql(table, len(partitions)), params).fetchall()


@functools.lru_cache(maxsize=64)
def _knn_sql(table: str, partitions: int) -> str:
    """One KNN per partition (vec0 filters partitions by equality only), in one
    statement; each scans just the rows of one slice the person may see. Each
    row says its partition as the bound value, not vec0's `part` column:
    reading that column back costs a lookup per row (bench/search_latency.py
    at 100k chunks: the leg's p50 went from 4.5 to 8.2 ms with it)."""
    part = (
        f"SELECT chunk_id, distance FROM {table} WHERE bits MATCH vec_bit(?) AND k = ? AND part = ?"
    )
    return " UNION ALL ".join(
        f"SELECT chunk_id, distance, ? FROM ({part})" for _ in range(partitions)
    )


def _exact_filtered_knn(vector, pools, filters, latest_only, generation) -> list:
    """With record or tag filters the pool is usually small: score it exactly,
    the filter inside the same query. (id, distance) pairs, nearest first."""
    where, params = where_sql(pools, filters, latest_only)
    distance = "vec_distance_cosine(e.vector, %s)"
    sql = (
        f"SELECT c.id, {distance} AS distance FROM library_chunk c "
        "JOIN library_document d ON d.id = c.document_id "
        f"JOIN {emb_table(generation)} e ON e.chunk_id = c.id "
        f"WHERE {where} ORDER BY distance, c.id LIMIT {LEG_DEPTH}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [tables.to_blob(vector), *params])
        return cursor.fetchall()
