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

import time

from apps.library.index import tables
from apps.library.index.embeddings import Embedder, get_embedder
from apps.library.search import timemode
from apps.library.search.fusion import fuse
from apps.library.search.legs import keyword_leg, vector_leg
from apps.library.search.query import Filters
from apps.library.search.results import Response, duplicate_paths, to_result
from apps.library.search.versions import expand_history, select_passages
from apps.library.selectors import visible_pools


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
    state = tables.require_matching_model()
    pools = visible_pools(user, cloud_only=cloud_only, source_ids=filters.source_ids)
    if not pools or not query.strip():
        return Response(query=query, mode=resolved, results=[])
    latest_only = resolved == timemode.PRESENT
    vector = (embedder or get_embedder()).embed_query(query)
    rankings = {
        "keyword": keyword_leg(query, pools, filters, latest_only),
        "semantic": vector_leg(vector, pools, filters, latest_only, state),
    }
    chosen = select_passages(fuse(rankings), limit, resolved)
    if resolved == timemode.HISTORY and chosen:
        chosen = expand_history(chosen, vector, pools, state.generation, limit)
    files = duplicate_paths({chunk.document_id for chunk, _, _ in chosen})
    results = [
        to_result(chunk, rank, score, legs, files)
        for rank, (chunk, score, legs) in enumerate(chosen, start=1)
    ]
    elapsed = (time.perf_counter() - started) * 1000
    return Response(query=query, mode=resolved, results=results, elapsed_ms=round(elapsed, 2))
