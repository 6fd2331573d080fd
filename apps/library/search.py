"""`search()`: the one retrieval function the CLI, the library UI and chat tools use.

1. Time mode: present (latest versions only), history (every version of the
   matched families, in date order), lookup (no filter); auto picks by rules.
2. Two legs over the privacy-filtered pool: FTS5 bm25 on the chunk text, and
   sqlite-vec KNN whose scan is restricted to the partitions the person may see.
3. Reciprocal rank fusion (k=60) of the two rankings: rank, not score, because
   bm25 and cosine live on different scales.
4. Results carry everything a citation needs: document, path, date and where
   it came from, family, latest or not, section, text, which legs matched.
"""

from __future__ import annotations

import functools
import re
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import date

import numpy as np
from django.db import connection
from django.db.models import Count

from apps.library import index, timemode
from apps.library.embeddings import Embedder, get_embedder
from apps.library.index import FTS_TABLE, emb_table, from_blob, to_codes, vec_table
from apps.library.models import Chunk, Document, DocumentFile
from apps.library.selectors import Pool, visible_pools

RRF_K = 60
LEG_DEPTH = 50  # candidates each leg contributes to the fusion
BIT_CANDIDATES = 12  # per partition (bucket), from the bit-code first pass
RESCORE_CANDIDATES = 400  # best bit matches re-scored with float vectors
KNN_THREADS = 2  # the bit-code scan is split across this many threads
MAX_PER_DOCUMENT = 2
FTS_MAX_TERMS = 32
COMMON_TERM_SHARE = 0.05  # a word in more than 5% of chunks is left out of the keyword leg…
COMMON_TERM_FLOOR = 500  # …once it is in more than this many
FTS_WEIGHTS = (1.0, 0.4)  # text, context (title, section, record line)
HISTORY_EXTRA = 2  # history mode may return up to limit * this many passages

_STOPWORDS = frozenset(
    """a an and are as at be been but by can could did do does for from had has have how i
    in is it its me my of on or our that the their them then there these they this to
    was we were what when where which who whom why will with would you your about into
    than any all also just should""".split()  # noqa: SIM905
)


@dataclass
class Filters:
    source_ids: list[int] | None = None
    kinds: list[str] | None = None
    category: str = ""
    status: str = ""
    entity: str = ""
    tags: list[str] = field(default_factory=list)
    date_from: date | None = None
    date_to: date | None = None
    document_ids: list[int] | None = None

    @property
    def narrows_beyond_sources(self) -> bool:
        return bool(
            self.kinds
            or self.category
            or self.status
            or self.entity
            or self.tags
            or self.date_from
            or self.date_to
            or self.document_ids is not None
        )


@dataclass
class Result:
    rank: int
    score: float
    chunk_id: int
    document_id: int
    title: str
    source_id: int
    source: str
    path: str
    duplicate_paths: list[str]
    date: str | None
    date_source: str
    family: str
    is_latest: bool
    section: str
    text: str
    legs: list[str]
    page: int | None
    annotation: str
    sharing: str
    cloud: str
    private: bool

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class Response:
    query: str
    mode: str
    results: list[Result]
    elapsed_ms: float = 0.0


def query_terms(text: str) -> list[str]:
    words = [w for w in re.findall(r"\w+", text.lower()) if len(w) > 1 or w.isdigit()]
    content = [w for w in words if w not in _STOPWORDS] or words
    return list(dict.fromkeys(content))[:FTS_MAX_TERMS]


def fts_query(text: str, terms: list[str] | None = None) -> str:
    """The question as an FTS5 expression: words only, each quoted (so `"`, `*`,
    `NEAR(`, `-` or `:` in a question can never be FTS syntax), joined by OR."""
    return " OR ".join(f'"{w}"' for w in (query_terms(text) if terms is None else terms))


_chunk_count: tuple[float, int] = (0.0, 0)


def _indexed_chunks() -> int:
    global _chunk_count
    checked, count = _chunk_count
    if time.monotonic() - checked > 60:
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM library_chunk")
            count = cursor.fetchone()[0]
        _chunk_count = (time.monotonic(), count)
    return count


def prune_common_terms(terms: list[str]) -> list[str]:
    """Leave out words that occur in a large share of all chunks. bm25 gives them
    almost no weight anyway, but an OR over them matches (and scores) a third
    of a big index; the semantic leg still reads the whole question. Small
    libraries keep every word."""
    cap = max(COMMON_TERM_FLOOR, int(_indexed_chunks() * COMMON_TERM_SHARE))
    if len(terms) <= 1 or _indexed_chunks() <= cap:
        return terms
    frequency = {}
    with connection.cursor() as cursor:
        for term in terms:
            cursor.execute(
                f"SELECT count(*) FROM (SELECT 1 FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s "
                f"LIMIT {cap + 1})",
                [f'"{term}"'],
            )
            frequency[term] = cursor.fetchone()[0]
    kept = [t for t in terms if frequency[t] <= cap]
    return kept or [min(terms, key=lambda t: frequency[t])]


def _pool_sql(pools: list[Pool]) -> tuple[str, list]:
    values = ",".join("(%s, %s)" for _ in pools)
    params: list = []
    for pool in pools:
        params += [pool.source_id, 1 if pool.private else 0]
    return f"(d.source_id, d.in_private_dir) IN (VALUES {values})", params


def _filter_sql(filters: Filters, latest_only: bool) -> tuple[str, list]:
    clauses: list[str] = []
    params: list = []
    if latest_only:
        clauses.append("c.is_latest = 1")
    if filters.kinds:
        clauses.append(f"d.kind IN ({','.join('%s' for _ in filters.kinds)})")
        params += list(filters.kinds)
    for column, value in (
        ("d.category", filters.category),
        ("d.record_status", filters.status),
        ("d.entity", filters.entity),
    ):
        if value:
            clauses.append(f"lower({column}) = lower(%s)")
            params.append(value)
    for tag in filters.tags:
        # Tags are rows: an exact match, never a substring.
        clauses.append(
            "d.id IN (SELECT document_id FROM library_documenttag WHERE tag = lower(%s))"
        )
        params.append(tag.lstrip("#"))
    if filters.date_from or filters.date_to:
        # Undated documents (only a file mtime) have no date to filter on.
        clauses.append("(c.section_date IS NOT NULL OR d.date_source NOT IN ('', 'mtime-weak'))")
    if filters.date_from:
        clauses.append("COALESCE(c.section_date, d.effective_date) >= %s")
        params.append(filters.date_from.isoformat())
    if filters.date_to:
        clauses.append("COALESCE(c.section_date, d.effective_date) <= %s")
        params.append(filters.date_to.isoformat())
    if filters.document_ids is not None:
        ids = list(filters.document_ids) or [0]
        clauses.append(f"d.id IN ({','.join('%s' for _ in ids)})")
        params += ids
    return " AND ".join(clauses), params


def _where(pools, filters, latest_only) -> tuple[str, list]:
    pool_sql, params = _pool_sql(pools)
    extra, extra_params = _filter_sql(filters, latest_only)
    where = pool_sql + (f" AND {extra}" if extra else "")
    return where, params + extra_params


def keyword_leg(query: str, pools, filters, latest_only) -> list[int]:
    terms = query_terms(query)
    if not terms:
        return []
    expression = fts_query(query, prune_common_terms(terms))
    where, params = _where(pools, filters, latest_only)
    sql = (
        f"SELECT f.rowid FROM {FTS_TABLE} f "
        "JOIN library_chunk c ON c.id = f.rowid "
        "JOIN library_document d ON d.id = c.document_id "
        f"WHERE {FTS_TABLE} MATCH %s AND {where} "
        f"ORDER BY bm25({FTS_TABLE}, {FTS_WEIGHTS[0]}, {FTS_WEIGHTS[1]}) LIMIT {LEG_DEPTH}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [expression, *params])
        return [row[0] for row in cursor.fetchall()]


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
    where, params = _where(pools, filters, latest_only)
    sql = (
        f"SELECT c.id FROM library_chunk c JOIN library_document d ON d.id = c.document_id "
        f"JOIN {emb_table(generation)} e ON e.chunk_id = c.id "
        f"WHERE {where} ORDER BY vec_distance_cosine(e.vector, %s) LIMIT {LEG_DEPTH}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, index.to_blob(vector)])
        return [row[0] for row in cursor.fetchall()]


def fuse(rankings: dict[str, list[int]]) -> list[tuple[int, float, list[str]]]:
    scores: dict[int, float] = defaultdict(float)
    legs: dict[int, list[str]] = defaultdict(list)
    for leg, ids in rankings.items():
        for rank, chunk_id in enumerate(ids, start=1):
            scores[chunk_id] += 1.0 / (RRF_K + rank)
            legs[chunk_id].append(leg)
    ordered = sorted(scores, key=lambda cid: (-scores[cid], cid))
    return [(cid, scores[cid], legs[cid]) for cid in ordered]


def _load(chunk_ids: list[int]) -> dict[int, Chunk]:
    chunks = Chunk.objects.filter(id__in=chunk_ids).select_related("document__source")
    return {c.id: c for c in chunks}


def _duplicates(document_ids: set[int]) -> dict[int, list[str]]:
    paths: dict[int, list[str]] = defaultdict(list)
    for document_id, path in DocumentFile.objects.filter(document_id__in=document_ids).values_list(
        "document_id", "path"
    ):
        paths[document_id].append(path)
    return paths


def _result(chunk: Chunk, rank: int, score: float, legs: list[str], files) -> Result:
    document = chunk.document
    source = document.source
    shown = chunk.section_date or document.shown_date
    return Result(
        rank=rank,
        score=round(score, 6),
        chunk_id=chunk.id,
        document_id=document.id,
        title=document.title,
        source_id=source.id,
        source=source.name,
        path=document.path,
        duplicate_paths=sorted(p for p in files.get(document.id, []) if p != document.path),
        date=shown.isoformat() if shown else None,
        date_source="section" if chunk.section_date else document.date_source,
        family=document.family,
        is_latest=chunk.is_latest,
        section=chunk.section,
        text=chunk.text,
        legs=legs,
        page=chunk.page,
        annotation=chunk.annotation,
        sharing=source.sharing,
        cloud="local-only" if document.in_private_dir else source.cloud,
        private=document.in_private_dir,
    )


def _select(fused, limit: int, mode: str) -> list[tuple[Chunk, float, list[str]]]:
    """Top `limit` passages, spread over documents: at most MAX_PER_DOCUMENT from
    one document, and in lookup mode one passage per version family (versions
    are near-duplicates; five slots should show five documents, and history
    mode is where versions are wanted side by side). When the latest version
    carries the very same passage as the best-ranked older one, the latest's
    copy represents the family."""
    chunks = _load([cid for cid, _, _ in fused[: max(limit * 10, 60)]])
    candidates = [(chunks[cid], score, legs) for cid, score, legs in fused if cid in chunks]
    versioned = _families_with_versions(candidates) if mode == timemode.LOOKUP else set()
    per_document: dict[int, int] = defaultdict(int)
    family_taken: set[tuple[int, str]] = set()
    chosen = []
    for position, (chunk, score, legs) in enumerate(candidates):
        document = chunk.document
        family = (document.source_id, document.family)
        if family in versioned:
            if family in family_taken:
                continue
            family_taken.add(family)
            chunk, score, legs = _prefer_latest(candidates[position:], family, (chunk, score, legs))
        if per_document[chunk.document_id] >= MAX_PER_DOCUMENT:
            continue
        per_document[chunk.document_id] += 1
        chosen.append((chunk, score, legs))
        if len(chosen) == limit:
            break
    return chosen


def _families_with_versions(candidates) -> set[tuple[int, str]]:
    families = {(c.document.source_id, c.document.family) for c, _, _ in candidates}
    families = {f for f in families if f[1] and not f[1].startswith("file:")}
    if not families:
        return set()
    counts = (
        Document.objects.filter(
            source_id__in={s for s, _ in families}, family__in={f for _, f in families}
        )
        .values_list("source_id", "family")
        .annotate(n=Count("id"))
        .order_by()
    )
    return {(source_id, family) for source_id, family, n in counts if n > 1}


def _same_passage(first: str, second: str) -> bool:
    return " ".join(first.split()) == " ".join(second.split())


def _prefer_latest(rest, family, best):
    if best[0].document.is_latest:
        return best
    for chunk, score, legs in rest:
        document = chunk.document
        if (document.source_id, document.family) != family or not document.is_latest:
            continue
        if _same_passage(chunk.text, best[0].text):
            return chunk, score, legs
    return best


def _expand_history(chosen, vector, pools, generation, limit) -> list:
    """Pull in the best passage of every version of the matched families that the
    ranking missed, so a question about change sees each version once."""
    have = {chunk.document_id for chunk, _, _ in chosen}
    families = {
        (chunk.document.source_id, chunk.document.family)
        for chunk, _, _ in chosen
        if chunk.document.family
    }
    allowed = {(p.source_id, p.private) for p in pools}
    extra = []
    for source_id, family in families:
        members = Chunk.objects.filter(
            document__source_id=source_id, document__family=family
        ).exclude(document_id__in=have)
        member_ids = list(members.values_list("id", "document_id", "document__in_private_dir"))
        by_document: dict[int, list[int]] = defaultdict(list)
        for chunk_id, document_id, private in member_ids:
            if (source_id, bool(private)) in allowed:
                by_document[document_id].append(chunk_id)
        for chunk_ids in by_document.values():
            best = _best_by_vector(chunk_ids, vector, generation)
            if best is not None:
                extra.append(best)
    room = max(0, limit * HISTORY_EXTRA - len(chosen))
    loaded = _load(extra[:room])
    expanded = chosen + [(loaded[cid], 0.0, ["version"]) for cid in extra[:room] if cid in loaded]

    def when(item):
        chunk = item[0]
        shown = chunk.section_date or chunk.document.shown_date
        return (shown is None, shown or date.max, chunk.document.path, chunk.ordinal)

    return sorted(expanded, key=when)


def _best_by_vector(chunk_ids: list[int], vector, generation) -> int | None:
    marks = ",".join("%s" for _ in chunk_ids)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT chunk_id, vector FROM {emb_table(generation)} WHERE chunk_id IN ({marks})",
            chunk_ids,
        )
        rows = cursor.fetchall()
    if not rows:
        return None
    scores = [float(from_blob(blob) @ vector) for _, blob in rows]
    return rows[int(np.argmax(scores))][0]


def search(
    user,
    query: str,
    *,
    mode: str = timemode.AUTO,
    limit: int = 10,
    cloud_only: bool = False,
    filters: Filters | None = None,
    embedder: Embedder | None = None,
) -> Response:
    started = time.perf_counter()
    resolved = timemode.resolve(mode, query)
    filters = filters or Filters()
    limit = max(1, min(int(limit), 100))
    state = index.require_matching_model()
    pools = visible_pools(user, cloud_only=cloud_only, source_ids=filters.source_ids)
    if not pools or not query.strip():
        return Response(query=query, mode=resolved, results=[])
    latest_only = resolved == timemode.PRESENT
    vector = (embedder or get_embedder()).embed_query(query)
    rankings = {
        "keyword": keyword_leg(query, pools, filters, latest_only),
        "semantic": vector_leg(vector, pools, filters, latest_only, state),
    }
    chosen = _select(fuse(rankings), limit, resolved)
    if resolved == timemode.HISTORY and chosen:
        chosen = _expand_history(chosen, vector, pools, state.generation, limit)
    files = _duplicates({chunk.document_id for chunk, _, _ in chosen})
    results = [
        _result(chunk, rank, score, legs, files)
        for rank, (chunk, score, legs) in enumerate(chosen, start=1)
    ]
    elapsed = (time.perf_counter() - started) * 1000
    return Response(query=query, mode=resolved, results=results, elapsed_ms=round(elapsed, 2))
