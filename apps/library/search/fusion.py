"""Reciprocal rank fusion of the legs' rankings: rank, not score, because
bm25 and cosine live on different scales; then documents first.

People ask for a note by what they want to do ("mark something as really
important"), and the note answering it is about that as a whole ("Priority")
even where no one passage says it best. So after the passages are fused,
the *documents* are fused too (`documents_first`): each leg ranks documents
by their best passage in it, the fused passage order ranks them once more,
and an "about" ranking orders the leading documents by how close the
question is to what the note is about as a whole (the centroid of its
passages' vectors, already stored: nothing new is embedded). The documents'
reciprocal ranks (a small k: the first places matter most) give their order.
That order (each document's best passage in it, the other passages after)
and the fused passage order are fused once more, by rank, so a note high on
both comes first and a strong note's second passage still beats a weak
note's only one. Measured on the three
corpora in docs/library.md ("Search")."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
from django.db import connection

from apps.library.index.tables import emb_table
from apps.library.search.query import pool_sql

RRF_K = 60


DOC_RRF_K = 5  # documents: the first few places carry the ranking


# How much each leg's document ranking counts. The keyword leg ORs every
# content word of a question, so a note that repeats common words of it
# ("task", "query") ranks high in it without being about the question.
DOC_WEIGHTS = {"keyword": 0.5, "semantic": 1.0, "record": 1.0, "about": 1.0, "passages": 1.0}


ABOUT_DOCUMENTS = 20  # leading documents whose centroid is compared with the question


# A one-passage note is about what its passage says; leaving such notes out
# of the about ranking cost every short note that vote (a one-line "Boiler
# service" note fell below a house-rules note that mentions the boiler).
ABOUT_MIN_PASSAGES = 1


ABOUT_PASSAGES = 32  # passages (the first, in order) a document's centroid is made of


def fuse(rankings: dict[str, list[int]]) -> list[tuple[int, float, list[str]]]:
    scores: dict[int, float] = defaultdict(float)
    legs: dict[int, list[str]] = defaultdict(list)
    for leg, ids in rankings.items():
        for rank, chunk_id in enumerate(ids, start=1):
            scores[chunk_id] += 1.0 / (RRF_K + rank)
            legs[chunk_id].append(leg)
    ordered = sorted(scores, key=lambda cid: (-scores[cid], cid))
    return [(cid, scores[cid], legs[cid]) for cid in ordered]


def documents_first(
    fused: list[tuple[int, float, list[str]]],
    rankings: dict[str, list[int]],
    vector: np.ndarray,
    pools,
    generation: int,
) -> list[tuple[int, float, list[str]]]:
    """`fused` reordered: each document's best passage in the documents'
    fused order, then the remaining passages in their own order. The fused
    scores keep their range and their place in the list (the first slot keeps
    the highest score), so what follows (families, latest-first, limits per
    document) reads the new order."""
    if not fused:
        return fused
    document_of = _documents_of([cid for cid, _, _ in fused])
    doc_rankings = {
        leg: _unique(document_of[cid] for cid in ids if cid in document_of)
        for leg, ids in rankings.items()
    }
    doc_rankings["passages"] = _unique(
        document_of[cid] for cid, _, _ in fused if cid in document_of
    )
    leading = _doc_rrf(doc_rankings)[:ABOUT_DOCUMENTS]
    doc_rankings["about"] = _about(leading, vector, pools, generation)
    order = {doc: rank for rank, doc in enumerate(_doc_rrf(doc_rankings))}
    firsts: dict[int, tuple[int, float, list[str]]] = {}
    rest = []
    for entry in fused:
        doc = document_of.get(entry[0])
        if doc is not None and doc not in firsts:
            firsts[doc] = entry
        else:
            rest.append(entry)
    by_documents = sorted(firsts.values(), key=lambda e: order.get(document_of[e[0]], len(order)))
    by_documents += rest
    # The two orders are fused, not one put over the other: all the firsts
    # before any second passage put a weak note's only passage above a strong
    # note's second one (a highlight below a stranger's note).
    place = {entry[0]: rank for rank, entry in enumerate(by_documents, start=1)}
    reciprocal = {
        entry[0]: 1 / (DOC_RRF_K + rank) + 1 / (DOC_RRF_K + place[entry[0]])
        for rank, entry in enumerate(fused, start=1)
    }
    reordered = sorted(fused, key=lambda e: -reciprocal[e[0]])
    scores = [score for _, score, _ in fused]
    return [(cid, score, legs) for (cid, _, legs), score in zip(reordered, scores, strict=True)]


def _doc_rrf(doc_rankings: dict[str, list[int]]) -> list[int]:
    scores: dict[int, float] = defaultdict(float)
    for leg, docs in doc_rankings.items():
        weight = DOC_WEIGHTS.get(leg, 1.0)
        for rank, doc in enumerate(docs, start=1):
            scores[doc] += weight / (DOC_RRF_K + rank)
    return sorted(scores, key=lambda doc: (-scores[doc], doc))


def _unique(values) -> list[int]:
    return list(dict.fromkeys(values))


def _documents_of(chunk_ids: list[int]) -> dict[int, int]:
    connection.ensure_connection()
    rows = connection.connection.execute(
        f"SELECT id, document_id FROM library_chunk WHERE id IN ({','.join('?' * len(chunk_ids))})",
        chunk_ids,
    ).fetchall()
    return dict(rows)


def _about(documents: list[int], vector: np.ndarray, pools, generation: int) -> list[int]:
    """`documents` ordered by the cosine of the question to the mean of each
    one's passage vectors: only passages this person may see (a section its
    note marks private says nothing about the note to anyone else)."""
    if not documents:
        return []
    where, params = pool_sql(pools)
    sql = (
        f"SELECT c.document_id, e.vector FROM library_chunk c "
        f"JOIN library_document d ON d.id = c.document_id "
        f"JOIN {emb_table(generation)} e ON e.chunk_id = c.id "
        f"WHERE c.document_id IN ({','.join('%s' for _ in documents)}) "
        f"AND c.ordinal < {int(ABOUT_PASSAGES)} AND {where}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [*documents, *params])
        rows = cursor.fetchall()
    vectors: dict[int, list[bytes]] = defaultdict(list)
    for doc, blob in rows:
        vectors[doc].append(blob)
    closeness = {}
    for doc, blobs in vectors.items():
        if len(blobs) < ABOUT_MIN_PASSAGES:
            continue
        matrix = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), -1)
        centroid = matrix.mean(axis=0)
        norm = float(np.linalg.norm(centroid))
        closeness[doc] = float(centroid @ vector) / norm if norm else 0.0
    return sorted(closeness, key=lambda doc: (-closeness[doc], doc))
