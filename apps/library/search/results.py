"""What a search returns: one Result per passage, carrying everything a
citation needs (document, path, date and where it came from, family, latest or
not, section, text, which legs matched, privacy)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, dataclass, field

from django.db import connection

from apps.library.models import Chunk, DocumentFile

# How each leg that found a passage is named on the library page; the code
# names stay in results for tools, `kb search` and the tests.
LEG_WORDS = {
    "keyword": "same words",
    "semantic": "similar meaning",
    "record": "record fields",
    "version": "another version of a match",
}


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
    is_latest: bool  # the newest version (and section) the asking person may see
    superseded_by: str  # when not latest: the newer version's path and date
    note: str  # e.g. a newer version exists but could not be read
    section: str
    text: str
    legs: list[str]
    page: int | None
    annotation: str
    sharing: str
    cloud: str
    private: bool
    # Cosine similarity to the question (None when it was not computed) and
    # whether the passage passed the relevance floor (apps.library.search.relevance).
    similarity: float | None = None
    relevant: bool = True

    def as_dict(self) -> dict:
        return asdict(self)

    @property
    def leg_words(self) -> list[str]:
        return [LEG_WORDS.get(leg, leg) for leg in self.legs]


@dataclass
class Response:
    query: str
    mode: str
    results: list[Result]
    elapsed_ms: float = 0.0
    rerank_ms: float = 0.0  # of elapsed_ms, the reranker's share (0 when none ran)
    # With search(with_everything=True): the same question over everything the
    # person may read (no reranker, every version), beside this cloud-only
    # answer: what the hold-back rule reads.
    everything: Response | None = None

    @property
    def relevant(self) -> list[Result]:
        """The results that passed the relevance floor."""
        return [r for r in self.results if r.relevant]


def duplicate_paths(document_ids: set[int]) -> dict[int, list[str]]:
    paths: dict[int, list[str]] = defaultdict(list)
    if not document_ids:
        return paths
    ids = sorted(document_ids)
    # A plain read: it runs on every search, and the ORM's building of the
    # query cost twenty times the query itself (0.22 against 0.01 ms).
    connection.ensure_connection()
    rows = connection.connection.execute(
        f"SELECT document_id, path FROM {DocumentFile._meta.db_table} "
        f"WHERE document_id IN ({','.join('?' * len(ids))})",
        ids,
    )
    for document_id, path in rows:
        paths[document_id].append(path)
    return paths


def to_result(candidate, rank: int, files) -> Result:
    """A Result from a ranked candidate (apps.library.versions.search.Candidate)."""
    chunk = candidate.chunk
    document = chunk.document
    source = document.source
    shown = chunk.section_date or document.shown_date
    return Result(
        rank=rank,
        score=round(candidate.score, 6),
        chunk_id=chunk.id,
        document_id=document.id,
        title=document.title,
        source_id=source.id,
        source=source.name,
        path=document.path,
        # Copies in this collection, then the same file in other collections
        # the person sees ("Collection/path"), which take no result slot of their own.
        duplicate_paths=sorted(p for p in files.get(document.id, []) if p != document.path)
        + list(getattr(candidate, "also_at", [])),
        date=shown.isoformat() if shown else None,
        date_source="section" if chunk.section_date else document.date_source,
        family=document.family,
        is_latest=candidate.current,
        superseded_by="" if candidate.current else candidate.superseded_by,
        note=candidate.note,
        section=chunk.section,
        text=chunk.text,
        legs=candidate.legs,
        page=chunk.page,
        annotation=chunk.annotation,
        sharing=source.sharing,
        cloud="local-only" if chunk.owner_only else source.cloud,
        private=chunk.owner_only,
    )


@dataclass
class _Unranked:
    """A passage read directly (a document's page, a project's evidence), in
    the shape `to_result` reads from a ranked candidate."""

    chunk: Chunk
    score: float = 0.0
    legs: list[str] = field(default_factory=list)
    current: bool = True
    superseded_by: str = ""
    note: str = ""


def chunk_result(chunk: Chunk) -> Result:
    """A Result for one passage that no search ranked (`chunk.document.source`
    loaded). Latest is the chunk's stored flag."""
    return to_result(_Unranked(chunk, current=chunk.is_latest), 0, {})
