"""Search time: versions in the ranking.

Which version is current depends on who asks: the newest version of a
family that *this person* may see (a note moved into its owner's private
folder leaves the household with the old copy, which is then current for
them, and nothing tells them a newer one exists). `family_view()` works that
out for the families among the candidates.

- **present / lookup**: family expansion. When an older version of a family
  scores, the newest version this person may see joins the candidates (its
  passage under the older passage's heading, dates stripped, or else its
  best passage for the question) with at least that score, and is ranked
  above every older version of its family. In present mode older versions
  then sink below every current passage; with `latest_only` they are dropped.
  A log's older dated sections count as older versions here too (but pull
  nothing in: the newest section is the same document).
- **history**: every version of the matched families, in date order (the
  best passage of each version the ranking missed is pulled in).

Slots: at most two passages per document; in present/lookup mode a family
with versions shows at most two (MAX_PER_FAMILY): two of its current version,
or one and an older passage, but only an older one that matched the question
clearly better than the current version (`DISTINCT_MARGIN`): versions are
near-duplicates, and five slots should show five documents.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date

import numpy as np
from django.db import connection

from apps.library.models import Chunk, Document
from apps.library.vectors import emb_table, from_blob
from apps.library.versions import timemode
from apps.library.versions.naming import family_stem

MAX_PER_DOCUMENT = 2
MAX_PER_FAMILY = 2  # present and lookup modes
CANDIDATES = 40  # fused passages considered (at least limit * 4)
HISTORY_EXTRA = 2  # history mode may return up to limit * this many passages
STEP = 1e-6  # how far above an older version its current version is placed
# An older version keeps a slot of its own (below its current version) only
# when its passage is closer to the question than anything in the current
# version by this much (cosine): then it says something the current one does
# not ("a staff role at Initech" that only the June plan has). Otherwise the
# two are near-duplicates and one slot, the current version's, shows the family.
DISTINCT_MARGIN = 0.05


# The fields a search reads (results, versions, fusion): only these are loaded.
# Django builds a model instance field by field, and a Document has many a
# search never reads (JSON fields among them); loading just these halves the
# cost of loading the candidates. A field missing here still works, but costs
# one query per passage: add it here when a search starts reading it.
_CHUNK_FIELDS = (
    "id",
    "document_id",
    "ordinal",
    "section",
    "text",
    "page",
    "annotation",
    "section_date",
    "is_latest",
    "private",  # a section its note marks private (Chunk.owner_only)
)
_DOCUMENT_FIELDS = (
    "id",
    "source_id",
    "title",
    "path",
    "kind",
    "family",
    "family_position",
    "is_latest",
    "in_private_dir",
    "effective_date",
    "date_source",
    "content_hash",  # the same file in two collections takes one slot (versions.select_passages)
)
_SOURCE_FIELDS = ("id", "name", "sharing", "cloud")
_LOADED = (
    *_CHUNK_FIELDS,
    *(f"document__{name}" for name in _DOCUMENT_FIELDS),
    *(f"document__source__{name}" for name in _SOURCE_FIELDS),
)


def load_chunks(chunk_ids: list[int]) -> dict[int, Chunk]:
    chunks = (
        Chunk.objects.filter(id__in=chunk_ids).select_related("document__source").only(*_LOADED)
    )
    return {c.id: c for c in chunks}


@dataclass
class Candidate:
    chunk: Chunk
    score: float
    legs: list[str]
    current: bool = True  # the newest version (and section) this person may see
    superseded_by: str = ""
    note: str = ""
    # An older version clearly closer to the question than its current
    # version (set by expand_families; see DISTINCT_MARGIN).
    distinct: bool = True
    versioned: bool = False  # its family has several versions this person may see
    # The same file (same bytes) in other collections this person sees, as
    # "Collection/path": listed with this result instead of taking slots.
    also_at: list[str] = field(default_factory=list)

    @property
    def document(self) -> Document:
        return self.chunk.document


@dataclass
class FamilyFacts:
    """One family as one person sees it."""

    current_id: int  # the newest readable version they may see
    current_path: str
    current_date: date | None
    versions: int  # readable versions they may see
    failed_newer: list[tuple[str, str]] = field(default_factory=list)  # (path, error)


def family_key(document: Document) -> tuple[int, str] | None:
    if not document.family or document.family.startswith("file:"):
        return None
    return (document.source_id, document.family)


def family_view(documents, pools) -> dict[tuple[int, str], FamilyFacts]:
    """For the families of `documents`: which member is current for the
    person whose `pools` these are, and which newer members failed to parse."""
    keys = {key for d in documents if (key := family_key(d))}
    if not keys:
        return {}
    allowed = {(p.source_id, p.private) for p in pools}
    members = Document.objects.filter(
        source_id__in={s for s, _ in keys},
        family__in={f for _, f in keys},
        status__in=[Document.Status.READY, Document.Status.FAILED],
    ).only(
        "id",
        "source_id",
        "family",
        "family_position",
        "status",
        "in_private_dir",
        "path",
        "error",
        "effective_date",
        "date_source",
    )
    by_family: dict[tuple[int, str], list[Document]] = defaultdict(list)
    for member in members:
        key = (member.source_id, member.family)
        if key in keys and (member.source_id, member.in_private_dir) in allowed:
            by_family[key].append(member)
    facts = {}
    for key, group in by_family.items():
        readable = [m for m in group if m.status == Document.Status.READY]
        if not readable:
            continue
        current = max(readable, key=lambda m: (m.family_position, m.pk))
        failed = sorted(
            (m for m in group if m.status == Document.Status.FAILED),
            key=lambda m: m.family_position,
        )
        facts[key] = FamilyFacts(
            current_id=current.pk,
            current_path=current.path,
            current_date=current.shown_date,
            versions=len(readable),
            failed_newer=[
                (m.path, m.error) for m in failed if m.family_position > current.family_position
            ],
        )
    return facts


def _newest_sections(document_ids: set[int]) -> dict[int, date]:
    """The newest section date of documents that are logs (dated sections)."""
    if not document_ids:
        return {}
    rows = (
        Chunk.objects.filter(document_id__in=document_ids, section_date__isnull=False)
        .values_list("document_id", "section_date")
        .order_by()
    )
    newest: dict[int, date] = {}
    for document_id, when in rows:
        if document_id not in newest or when > newest[document_id]:
            newest[document_id] = when
    return newest


def mark_current(candidates: list[Candidate], facts) -> None:
    """Set `current`, `superseded_by` and `note` on each candidate for this person."""
    # Documents that are current for this person although not the family's
    # latest (its latest is hidden from them): their sections decide alone.
    stand_ins = {
        c.chunk.document_id
        for c in candidates
        if not c.document.is_latest
        and (key := family_key(c.document)) in facts
        and facts[key].current_id == c.chunk.document_id
    }
    newest = _newest_sections(stand_ins)
    for c in candidates:
        document = c.document
        key = family_key(document)
        fact = facts.get(key) if key else None
        c.versioned = bool(fact and fact.versions > 1)
        document_current = fact.current_id == document.pk if fact else True
        if not document_current and fact:
            when = fact.current_date.isoformat() if fact.current_date else "undated"
            c.current = False
            c.superseded_by = f"{fact.current_path} ({when})"
            continue
        if document.pk in stand_ins:
            section = c.chunk.section_date
            c.current = section is None or section == newest.get(document.pk)
        else:
            c.current = c.chunk.is_latest
        if not c.current:
            c.superseded_by = "a newer dated section of this note"
        if fact and fact.failed_newer:
            path, error = fact.failed_newer[-1]
            c.note = (
                f"A newer version, {path}, could not be read ({error or 'parse failed'}); "
                "this is the newest version that could."
            )


def load_candidates(fused, limit: int) -> list[Candidate]:
    wanted = fused[: max(limit * 4, CANDIDATES)]
    chunks = load_chunks([cid for cid, _, _ in wanted])
    return [
        Candidate(chunks[cid], score, list(legs)) for cid, score, legs in wanted if cid in chunks
    ]


def expand_families(
    candidates: list[Candidate], facts, vector, pools, generation: int
) -> list[Candidate]:
    """Every family with an older version among the candidates gets its
    current version in, above the older passages it stands for. An older
    passage stands for its counterpart, the current version's passage under
    the same heading (dates stripped: `section_key`), where the current
    version has that section; otherwise for the current version's passage
    closest to the question. Marks each older passage `distinct` when it is
    clearly closer to the question than anything in its current version
    (DISTINCT_MARGIN). Only passages in `pools` are pulled in: a section its
    note marks private stays out for anyone else."""
    older = [
        c
        for c in candidates
        if (key := family_key(c.document)) in facts and facts[key].current_id != c.chunk.document_id
    ]
    if not older:
        return candidates
    wanted: dict[int, set[str]] = defaultdict(set)
    for c in older:
        wanted[facts[family_key(c.document)].current_id].add(section_key(c.chunk.section))
    best_current, counterparts = _current_chunks(wanted, vector, pools, generation)
    older_vectors = _vectors([c.chunk.id for c in older], generation)
    # Each document's best-scoring current passage among the candidates.
    present_best: dict[int, Candidate] = {}
    for c in candidates:
        best = present_best.get(c.chunk.document_id)
        if c.current and (best is None or c.score > best.score):
            present_best[c.chunk.document_id] = c
    # The score each current passage must beat: the best older passage it stands for.
    above: dict[int, float] = {}
    for c in older:
        current_id = facts[family_key(c.document)].current_id
        closest = best_current.get(current_id)
        if closest is not None and c.chunk.id in older_vectors:
            c.distinct = float(older_vectors[c.chunk.id] @ vector) >= closest[1] + DISTINCT_MARGIN
        # The newer version's same section answers what the older passage
        # did, where the passage closest to the question may be another
        # section entirely ("Who I Am" for a question the older "Tech Stack"
        # matched).
        stand_in = counterparts.get((current_id, section_key(c.chunk.section)))
        if stand_in is None and current_id in present_best:
            stand_in = present_best[current_id].chunk.id
        if stand_in is None and closest is not None:
            stand_in = closest[0]
        if stand_in is not None:
            above[stand_in] = max(above.get(stand_in, float("-inf")), c.score)
    present = {c.chunk.id: c for c in candidates if c.current}
    for chunk_id, score in above.items():
        if chunk_id in present and present[chunk_id].score <= score:
            present[chunk_id].score = score + STEP
            if "version" not in present[chunk_id].legs:
                present[chunk_id].legs.append("version")
    missing = [chunk_id for chunk_id in above if chunk_id not in present]
    if missing:
        loaded = load_chunks(missing)
        pulled = [
            Candidate(loaded[chunk_id], above[chunk_id] + STEP, ["version"])
            for chunk_id in missing
            if chunk_id in loaded
        ]
        mark_current(pulled, facts)
        candidates += pulled
    candidates.sort(key=lambda c: -c.score)
    return candidates


def section_key(section: str) -> str:
    """A passage's heading path with dates and version markers stripped:
    "Handoff › October 10, 2026 › Tech Stack" and "Handoff › September 22,
    2026 › Tech Stack" are the same section of two versions."""
    return family_stem(section)


def _current_chunks(
    wanted: dict[int, set[str]], vector, pools, generation
) -> tuple[dict[int, tuple[int, float]], dict[tuple[int, str], int]]:
    """For each document in `wanted`: its current passage closest to the
    question, (chunk id, cosine); and for each of its wanted sections
    (`section_key`) the closest current passage under that section, keyed by
    (document id, section key). Only passages in `pools` count (a private
    section's passage counts as private, as in the index's slices)."""
    allowed = {(p.source_id, p.private) for p in pools}
    chunks = Chunk.objects.filter(document_id__in=list(wanted)).values_list(
        "id", "document_id", "section_date", "section", "document__source_id",
        "document__in_private_dir", "private",
    )  # fmt: skip
    by_document: dict[int, list[tuple[int, date | None, str]]] = defaultdict(list)
    for chunk_id, document_id, day, section, source_id, in_private_dir, private in chunks:
        if (source_id, bool(in_private_dir or private)) in allowed:
            by_document[document_id].append((chunk_id, day, section))
    current: dict[int, list[tuple[int, str]]] = {}
    for document_id, rows in by_document.items():
        dates = [day for _, day, _ in rows if day]
        newest = max(dates) if dates else None
        current[document_id] = [(cid, sec) for cid, day, sec in rows if day in (None, newest)]
    vectors = _vectors([cid for rows in current.values() for cid, _ in rows], generation)
    best: dict[int, tuple[int, float]] = {}
    same: dict[tuple[int, str], tuple[int, float]] = {}
    for document_id, rows in current.items():
        for chunk_id, section in rows:
            if chunk_id not in vectors:
                continue
            score = float(vectors[chunk_id] @ vector)
            if document_id not in best or score > best[document_id][1]:
                best[document_id] = (chunk_id, score)
            key = (document_id, section_key(section))
            if key[1] in wanted[document_id] and (key not in same or score > same[key][1]):
                same[key] = (chunk_id, score)
    return best, {key: chunk_id for key, (chunk_id, _) in same.items()}


def _vectors(chunk_ids: list[int], generation: int) -> dict[int, np.ndarray]:
    found = {}
    with connection.cursor() as cursor:
        for start in range(0, len(chunk_ids), 500):
            batch = chunk_ids[start : start + 500]
            marks = ",".join("%s" for _ in batch)
            cursor.execute(
                f"SELECT chunk_id, vector FROM {emb_table(generation)} WHERE chunk_id IN ({marks})",
                batch,
            )
            found.update({cid: from_blob(blob) for cid, blob in cursor.fetchall()})
    return found


def order_for_mode(candidates: list[Candidate], mode: str, latest_only: bool) -> list[Candidate]:
    if latest_only:
        return [c for c in candidates if c.current]
    if mode == timemode.PRESENT:
        # Older versions rank below every current passage (stable otherwise).
        return [c for c in candidates if c.current] + [c for c in candidates if not c.current]
    return candidates


def _same_passage(first: str, second: str) -> bool:
    return " ".join(first.split()) == " ".join(second.split())


def select_passages(candidates: list[Candidate], limit: int, mode: str) -> list[Candidate]:
    """Top `limit` passages, spread over documents and families."""
    per_document: dict[int, int] = defaultdict(int)
    per_family: dict[tuple[int, str], list[Candidate]] = defaultdict(list)
    capped = mode != timemode.HISTORY
    chosen = []
    # content hash -> the first document with those bytes (another collection's copy)
    by_bytes: dict[str, Candidate] = {}
    for c in candidates:
        if per_document[c.chunk.document_id] >= MAX_PER_DOCUMENT:
            continue
        twin = by_bytes.get(c.document.content_hash) if c.document.content_hash else None
        if twin is not None and twin.chunk.document_id != c.chunk.document_id:
            place = f"{c.document.source.name}/{c.document.path}"
            if place not in twin.also_at:
                twin.also_at.append(place)
            continue
        if capped and not c.current and not c.distinct:
            continue
        key = family_key(c.document)
        if capped and key and c.versioned:
            taken = per_family[key]
            if len(taken) >= MAX_PER_FAMILY:
                continue
            # Versions are near-duplicates: an older passage only when it says
            # something the current version does not (the current version's
            # passages are a document's like any other).
            if not c.current and any(_same_passage(t.chunk.text, c.chunk.text) for t in taken):
                continue
            taken.append(c)
        per_document[c.chunk.document_id] += 1
        if c.document.content_hash:
            by_bytes.setdefault(c.document.content_hash, c)
        chosen.append(c)
        if len(chosen) == limit:
            break
    return chosen


def expand_history(chosen: list[Candidate], facts, vector, pools, generation, limit) -> list:
    """Pull in the best passage of every version of the matched families that the
    ranking missed, so a question about change sees each version once."""
    have = {c.chunk.document_id for c in chosen}
    families = {key for c in chosen if (key := family_key(c.document))}
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
    added = [Candidate(loaded[cid], 0.0, ["version"]) for cid in extra[:room] if cid in loaded]
    expanded = chosen + added
    mark_current(added, facts | family_view([c.document for c in added], pools))

    def when(c: Candidate):
        shown = c.chunk.section_date or c.document.shown_date
        return (shown is None, shown or date.max, c.document.path, c.chunk.ordinal)

    return sorted(expanded, key=when)


def _best_by_vector(chunk_ids: list[int], vector, generation) -> int | None:
    vectors = _vectors(chunk_ids, generation)
    if not vectors:
        return None
    ids = list(vectors)
    scores = [float(vectors[cid] @ vector) for cid in ids]
    return ids[int(np.argmax(scores))]
