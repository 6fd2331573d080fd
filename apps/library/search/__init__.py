"""Retrieval: `search()` and what it returns.

engine   search(): time mode → legs → fusion → versions → results
query    the question's words and the pool/filter SQL
legs     FTS5 bm25 and sqlite-vec KNN
fusion   reciprocal rank fusion
results  Result / Response

The time mode (which versions a question is about) and the version rules of
the ranking (family expansion, slots per family, history expansion) live in
`apps.library.versions` (`timemode`, `search`).

Other apps import from this package itself, never from its modules
(the library's front-door contract in pyproject.toml).
"""

from apps.library.search.engine import search
from apps.library.search.query import Filters, fts_query, query_terms
from apps.library.search.results import Response, Result, chunk_result

__all__ = ["Filters", "Response", "Result", "chunk_result", "fts_query", "query_terms", "search"]
