"""Whether a passage is about the question at all: the relevance floor.

The semantic leg always returns nearest neighbours, so every question, even
`qwxzv`, gets passages. A passage is *relevant* when the keyword leg or the
record leg found it (a word of the question, or a record value it names,
is in it), or when its cosine similarity to the question is at least
RELEVANCE_FLOOR. The floor was calibrated with `bench/relevance_floor.py` on
both retrieval evals and on nonsense and general-knowledge questions (the
figures are in docs/library.md, "Search"). Ranking is untouched: the flag
only tells callers (the library page, the chat's first search, the cloud
hold-back, the no-model fallback) whether "nothing matched" is the truth.
"""

from __future__ import annotations

import numpy as np
from django.db import connection

from apps.library.index.tables import emb_table

# all-MiniLM-L6-v2 cosine. See bench/relevance_floor.py and docs/library.md.
RELEVANCE_FLOOR = 0.40
# Legs whose hit is evidence by itself: the question's words or record values.
MATCHING_LEGS = frozenset({"keyword", "record"})


def similarities(vector: np.ndarray, chunk_ids: list[int], generation: int) -> dict[int, float]:
    """Cosine similarity of each chunk to the question (vectors are unit length)."""
    if not chunk_ids:
        return {}
    connection.ensure_connection()
    rows = connection.connection.execute(
        f"SELECT chunk_id, vector FROM {emb_table(generation)} "
        f"WHERE chunk_id IN ({','.join('?' * len(chunk_ids))})",
        list(chunk_ids),
    ).fetchall()
    if not rows:
        return {}
    matrix = np.frombuffer(b"".join(blob for _, blob in rows), dtype=np.float32)
    scores = matrix.reshape(len(rows), -1) @ np.asarray(vector, dtype=np.float32)
    return {row[0]: float(score) for row, score in zip(rows, scores, strict=True)}


def is_relevant(legs: list[str], similarity: float | None) -> bool:
    if MATCHING_LEGS.intersection(legs):
        return True
    return similarity is not None and similarity >= RELEVANCE_FLOOR
