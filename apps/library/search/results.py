"""What a search returns: one Result per passage, carrying everything a
citation needs (document, path, date and where it came from, family, latest or
not, section, text, which legs matched, privacy)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, dataclass

from apps.library.models import Chunk, DocumentFile


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


def load_chunks(chunk_ids: list[int]) -> dict[int, Chunk]:
    chunks = Chunk.objects.filter(id__in=chunk_ids).select_related("document__source")
    return {c.id: c for c in chunks}


def duplicate_paths(document_ids: set[int]) -> dict[int, list[str]]:
    paths: dict[int, list[str]] = defaultdict(list)
    for document_id, path in DocumentFile.objects.filter(document_id__in=document_ids).values_list(
        "document_id", "path"
    ):
        paths[document_id].append(path)
    return paths


def to_result(chunk: Chunk, rank: int, score: float, legs: list[str], files) -> Result:
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
        cloud="local-only" if chunk.owner_only else source.cloud,
        private=chunk.owner_only,
    )
