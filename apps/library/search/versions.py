"""Versions in the ranking: which passages fill the slots (at most two per
document; in lookup mode one per version family, the latest's copy when it
holds the same passage), and history mode's expansion to every version of the
matched families, in date order."""

from __future__ import annotations

from collections import defaultdict
from datetime import date

import numpy as np
from django.db import connection
from django.db.models import Count

from apps.library.index.tables import emb_table, from_blob
from apps.library.models import Chunk, Document
from apps.library.search import timemode
from apps.library.search.results import load_chunks

MAX_PER_DOCUMENT = 2


HISTORY_EXTRA = 2  # history mode may return up to limit * this many passages


def select_passages(fused, limit: int, mode: str) -> list[tuple[Chunk, float, list[str]]]:
    """Top `limit` passages, spread over documents: at most MAX_PER_DOCUMENT from
    one document, and in lookup mode one passage per version family (versions
    are near-duplicates; five slots should show five documents, and history
    mode is where versions are wanted side by side). When the latest version
    carries the very same passage as the best-ranked older one, the latest's
    copy represents the family."""
    chunks = load_chunks([cid for cid, _, _ in fused[: max(limit * 10, 60)]])
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


def expand_history(chosen, vector, pools, generation, limit) -> list:
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
        member_ids = list(
            members.values_list("id", "document_id", "document__in_private_dir", "private")
        )
        by_document: dict[int, list[int]] = defaultdict(list)
        for chunk_id, document_id, in_private_dir, private_section in member_ids:
            if (source_id, bool(in_private_dir or private_section)) in allowed:
                by_document[document_id].append(chunk_id)
        for chunk_ids in by_document.values():
            best = _best_by_vector(chunk_ids, vector, generation)
            if best is not None:
                extra.append(best)
    room = max(0, limit * HISTORY_EXTRA - len(chosen))
    loaded = load_chunks(extra[:room])
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
