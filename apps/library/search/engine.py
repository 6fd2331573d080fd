"""`search()`: the one retrieval function the CLI, the library UI and chat tools use.

1. Time mode: present (about now), history (how it changed), lookup
   (anything); auto picks by rules over the wording.
2. Three legs over the privacy-filtered pool: FTS5 bm25 over title, headings,
   path words, record fields and text; sqlite-vec KNN whose scan is restricted
   to the partitions the person may see; and the record leg (documents whose
   record fields the question names, in everyday words too).
3. Reciprocal rank fusion (k=60) of the rankings: rank, not score, because
   bm25 and cosine live on different scales; then the documents are fused
   too (each leg's documents, and how close the question is to what each
   leading note is about as a whole) and each document's best passage comes
   out in that order (apps.library.search.fusion).
4. An optional reranker re-orders the top of the fused list (apps.library.
   search.rerank); off unless an admin configures one. A reranker on a cloud
   connection is consulted only for a search made on behalf of a cloud model
   (`for_cloud_model`): anywhere else the question itself must not leave the
   server, so the fused order stands.
5. Versions (apps.library.versions.search): in present and lookup mode a
   family's newest version this person may see joins and ranks above every
   older version of it; older versions sink (present) or go (`latest_only`).
   History mode lists every version in date order.
6. Results carry everything a citation needs: document, path, date and where
   it came from, family, latest or not (for this person), what superseded it,
   section, text, which legs matched.
"""

from __future__ import annotations

import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace

import numpy as np
from django.contrib.auth.models import User
from django.db import connection

from apps.library.index import tables
from apps.library.index.embeddings import Embedder, embedder_for_index
from apps.library.search.fusion import documents_first, fuse
from apps.library.search.legs import keyword_legs, vector_legs
from apps.library.search.query import Filters, negated_tags, without_tags
from apps.library.search.records import record_leg
from apps.library.search.relevance import is_relevant, similarities
from apps.library.search.rerank import Reranker, configured_reranker
from apps.library.search.results import Response, duplicate_paths, to_result
from apps.library.selectors import visible_pools
from apps.library.versions import timemode
from apps.library.versions.search import (
    expand_families,
    expand_history,
    family_view,
    load_candidates,
    mark_current,
    order_for_mode,
    select_passages,
)

_DEFAULT = object()

# Embeds questions beside the keyword leg; the embedder serialises its own calls.
_embed_pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="jarvis-query-embed")


# Runs the KNN leg as soon as the question's vector is there, beside the
# keyword leg. Its own pool: a KNN leg waits for its vector (an _embed_pool
# task) and for its scan's halves (legs._scan_pool tasks), so it must hold a
# thread of neither.
_semantic_pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="jarvis-semantic-leg")


ANSWER = "answer"  # the view a search returns
EVERYTHING = "everything"  # with `with_everything`: all the person may read


def _semantic_leg(embedding: Future, views, filters, state) -> Future | None:
    """The KNN leg started on its own thread, to run once `embedding` is done;
    None inside a transaction, where only this thread's connection sees the
    transaction's writes (the caller then runs it after the keyword leg)."""
    if connection.in_atomic_block:
        return None
    return _semantic_pool.submit(
        lambda: vector_legs(embedding.result(), views, filters, False, state)
    )


def search(
    *,
    user: User,
    query: str,
    mode: str = timemode.AUTO,
    limit: int = 10,
    cloud_only: bool = False,
    filters: Filters | None = None,
    embedder: Embedder | None = None,
    latest_only: bool = False,
    reranker: Reranker | object | None = _DEFAULT,
    for_cloud_model: bool = False,
    with_everything: bool = False,
) -> Response:
    """With `cloud_only` and `with_everything`, the response also carries
    `everything`: the same question over all the person may read, fused
    without a reranker or `latest_only`, as a search without `cloud_only`
    would return it. A cloud model's turn needs both (the hold-back rule,
    apps.chats.tools.library); the question is embedded once and each leg
    scans once."""
    started = time.perf_counter()
    resolved = timemode.resolve(mode, query)
    filters = filters or Filters()
    limit = max(1, min(int(limit), 100))
    state = tables.require_matching_model()
    if not query.strip():
        return Response(query=query, mode=resolved, results=[])
    views = {ANSWER: visible_pools(user, cloud_only=cloud_only, source_ids=filters.source_ids)}
    if cloud_only and with_everything:
        views[EVERYTHING] = visible_pools(user, source_ids=filters.source_ids)
    if not any(views.values()):
        nothing = Response(query=query, mode=resolved, results=[])
        return replace(nothing, everything=nothing if EVERYTHING in views else None)
    # The question is embedded on another thread while this one runs the
    # keyword leg: ONNX and SQLite both release the GIL, so on two cores they
    # overlap (the embedder needs no database connection, so this holds
    # inside a transaction too). Only once there is something to search: an
    # embedding begun for a search that then returned early ran on after it
    # (on a fresh process, the model's load: seconds of a thread nobody waits for).
    embedding = _embed_pool.submit((embedder or embedder_for_index(state)).embed_query, query)
    semantic = _semantic_leg(embedding, views, filters, state)
    keyword = keyword_legs(query, views, filters, False)
    vector = embedding.result()
    if semantic is None:
        nearest = vector_legs(vector, views, filters, False, state)
    else:
        nearest = semantic.result()
    reranker = configured_reranker() if reranker is _DEFAULT else reranker
    if reranker is not None and getattr(reranker, "cloud", False) and not for_cloud_model:
        # The query of a local-model chat, a private chat, the search box, the
        # CLI or MCP would reach a cloud service for the sake of an ordering.
        reranker = None
    responses = {}
    for name, pools in views.items():
        rankings = {"keyword": keyword[name], "semantic": nearest[name]}
        # Which passages match is all the hold-back asks of `everything`: no
        # reranker, and every version of a note.
        answer = name == ANSWER
        only_latest = answer and latest_only
        view = _View(query, resolved, vector, pools, state.generation, limit, only_latest)
        responses[name] = view.respond(rankings, filters, reranker if answer else None)
    response = responses[ANSWER]
    response.everything = responses.get(EVERYTHING)
    response.elapsed_ms = round((time.perf_counter() - started) * 1000, 2)
    return response


@dataclass
class _View:
    """One view's fusion, versions and results, from legs already ranked."""

    query: str
    mode: str
    vector: np.ndarray
    pools: list
    generation: int
    limit: int
    latest_only: bool

    def respond(self, rankings: dict, filters, reranker) -> Response:
        query, resolved, vector, pools = self.query, self.mode, self.vector, self.pools
        generation, limit, latest_only = self.generation, self.limit, self.latest_only
        if not pools:
            return Response(query=query, mode=resolved, results=[])
        if not filters.narrows_beyond_sources:
            rankings["record"] = record_leg(query, vector, pools, generation)
        fused = documents_first(fuse(rankings), rankings, vector, pools, generation)
        rerank_ms = 0.0
        if reranker is not None and fused:
            rerank_started = time.perf_counter()
            fused = reranker.rerank_fused(query, fused)
            rerank_ms = (time.perf_counter() - rerank_started) * 1000
        # "not remote": documents tagged remote are left out, here and after
        # family expansion (which may pull in a tagged newer version).
        excluded = negated_tags(query, pools)
        candidates = without_tags(load_candidates(fused, limit), excluded)
        facts = family_view([c.document for c in candidates], pools)
        mark_current(candidates, facts)
        if resolved != timemode.HISTORY:
            candidates = expand_families(candidates, facts, vector, pools, generation)
            candidates = without_tags(candidates, excluded)
            candidates = order_for_mode(candidates, resolved, latest_only)
        chosen = select_passages(candidates, limit, resolved)
        if resolved == timemode.HISTORY and chosen:
            chosen = expand_history(chosen, facts, vector, pools, generation, limit)
            chosen = without_tags(chosen, excluded)
            if latest_only:
                chosen = [c for c in chosen if c.current]
        files = duplicate_paths({c.chunk.document_id for c in chosen})
        results = [to_result(c, rank, files) for rank, c in enumerate(chosen, start=1)]
        closeness = similarities(vector, [r.chunk_id for r in results], generation)
        for result in results:
            result.similarity = closeness.get(result.chunk_id)
            result.relevant = is_relevant(result.legs, result.similarity)
        return Response(query=query, mode=resolved, results=results, rerank_ms=round(rerank_ms, 2))
