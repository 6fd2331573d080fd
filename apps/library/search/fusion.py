"""Reciprocal rank fusion of the legs' rankings: rank, not score, because
bm25 and cosine live on different scales."""

from __future__ import annotations

from collections import defaultdict

RRF_K = 60


def fuse(rankings: dict[str, list[int]]) -> list[tuple[int, float, list[str]]]:
    scores: dict[int, float] = defaultdict(float)
    legs: dict[int, list[str]] = defaultdict(list)
    for leg, ids in rankings.items():
        for rank, chunk_id in enumerate(ids, start=1):
            scores[chunk_id] += 1.0 / (RRF_K + rank)
            legs[chunk_id].append(leg)
    ordered = sorted(scores, key=lambda cid: (-scores[cid], cid))
    return [(cid, scores[cid], legs[cid]) for cid in ordered]
