"""Candidate papers: fetching them from arXiv and bioRxiv for one person, and
removing duplicates (within the week's fetch and against their library)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from django.db.models import Q

from apps.digest import biorxiv
from apps.library.models import Document
from apps.library.selectors import visible_to
from apps.library.services import (
    PaperMeta,
    PaperSourceDown,
    arxiv_category_search,
    normalise_title,
)

logger = logging.getLogger(__name__)

# A digest covers the week before it: papers published (or posted) since then.
WINDOW_DAYS = 7
# arXiv listing page size: large pages mean fewer calls under the courtesy delay.
ARXIV_PAGE_SIZE = 100

MUST_READ = 9.0
WORTH_READING = 8.0
TIERS = ("must", "worth", "skim")
TIER_TITLES = {
    "must": "Must read",
    "worth": "Worth reading",
    "skim": "Skim",
    "unscored": "Not scored",
}


class DigestFailed(Exception):
    """The digest could not be made; the message says why (shown to people)."""


@dataclass
class Paper:
    origin: str  # "arxiv" | "biorxiv"
    source: str  # "arXiv cs.LG", "bioRxiv bioinformatics", "bioRxiv “cytometry”"
    title: str
    authors: list[str]
    abstract: str
    published: date | None
    link: str
    arxiv_id: str = ""
    doi: str = ""
    meta: PaperMeta | None = field(default=None, repr=False)
    n: int = 0  # its number within the digest, which the scoring prompt uses as id
    score: float | None = None
    track: str = ""
    summary: str = ""
    why: str = ""
    # What went into the library for it: "full_text", "summary" or "" (only the digest).
    library_mode: str = ""
    document_id: int | None = None
    note: str = ""  # a warning about this paper (a PDF that could not be fetched…)

    @property
    def tier(self) -> str:
        if self.score is None:
            return "unscored"
        if self.score >= MUST_READ:
            return "must"
        if self.score >= WORTH_READING:
            return "worth"
        return "skim"

    @property
    def authors_text(self) -> str:
        return ", ".join(self.authors)

    def as_item(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "origin": self.origin,
            "source": self.source,
            "title": self.title,
            "authors": self.authors,
            "published": self.published.isoformat() if self.published else "",
            "link": self.link,
            "arxiv_id": self.arxiv_id,
            "doi": self.doi,
            "score": self.score,
            "track": self.track,
            "summary": self.summary,
            "why": self.why,
            "tier": self.tier,
            "library_mode": self.library_mode,
            "document_id": self.document_id,
            "note": self.note,
        }

    @classmethod
    def from_item(cls, item: dict[str, Any]) -> Paper:
        published = item.get("published") or ""
        return cls(
            origin=str(item.get("origin", "")),
            source=str(item.get("source", "")),
            title=str(item.get("title", "")),
            authors=[str(a) for a in item.get("authors") or []],
            abstract="",
            published=date.fromisoformat(published) if published else None,
            link=str(item.get("link", "")),
            arxiv_id=str(item.get("arxiv_id", "")),
            doi=str(item.get("doi", "")),
            n=int(item.get("n") or 0),
            score=item.get("score"),
            track=str(item.get("track", "")),
            summary=str(item.get("summary", "")),
            why=str(item.get("why", "")),
            library_mode=str(item.get("library_mode", "")),
            document_id=item.get("document_id"),
            note=str(item.get("note", "")),
        )


def from_arxiv(meta: PaperMeta, category: str) -> Paper:
    return Paper(
        origin="arxiv",
        source=f"arXiv {category}",
        title=meta.title,
        authors=list(meta.authors),
        abstract=meta.abstract,
        published=meta.published,
        link=meta.arxiv_id.canonical_url,
        arxiv_id=meta.arxiv_id.id,
        doi=meta.doi,
        meta=meta,
    )


def from_biorxiv(preprint: biorxiv.Preprint, source: str) -> Paper:
    return Paper(
        origin="biorxiv",
        source=source,
        title=preprint.title,
        authors=list(preprint.authors),
        abstract=preprint.abstract,
        published=preprint.posted,
        link=preprint.link,
        doi=preprint.doi,
    )


# --- Fetching


@dataclass
class Fetched:
    papers: list[Paper]
    counts: list[tuple[str, int]]  # (source label, how many it gave)
    warnings: list[str]


def fetch_arxiv_category(category: str, *, limit: int, since: date) -> list[PaperMeta]:
    """The newest `limit` papers of `category` published on or after `since`.
    The listing is newest first, so paging stops at the first older paper.
    Empty-200 pages, 5xx and timeouts are retried inside search_category."""
    found: list[PaperMeta] = []
    start = 0
    while len(found) < limit:
        want = min(ARXIV_PAGE_SIZE, limit - len(found))
        page = arxiv_category_search(category, max_results=want, start=start)
        if not page:
            break
        recent = [m for m in page if m.published is None or m.published >= since]
        found.extend(recent)
        if len(recent) < len(page):
            break
        start += want
    return found[:limit]


def fetch_all(
    *,
    arxiv_categories: list,
    biorxiv_categories: list,
    biorxiv_keywords: list,
    today: date,
) -> Fetched:
    """Everything the configuration asks for, arXiv first. Any source that
    keeps failing fails the whole digest (DigestFailed with its reason): a
    digest silently missing a source would read as a quiet week."""
    since = today - timedelta(days=WINDOW_DAYS)
    papers: list[Paper] = []
    counts: list[tuple[str, int]] = []
    warnings: list[str] = []
    for category, limit in arxiv_categories:
        label = f"arXiv {category}"
        try:
            metas = fetch_arxiv_category(category, limit=int(limit), since=since)
        except (PaperSourceDown, ValueError) as exc:
            raise DigestFailed(f"{label}: {exc}") from exc
        papers.extend(from_arxiv(meta, category) for meta in metas)
        counts.append((label, len(metas)))
        if not metas:
            warnings.append(f"{label} had no papers in the last {WINDOW_DAYS} days")
    for category, limit in biorxiv_categories:
        label = f"bioRxiv {category}"
        try:
            found = biorxiv.fetch_category(category, start=since, end=today, limit=int(limit))
        except biorxiv.BiorxivDown as exc:
            raise DigestFailed(f"{label}: {exc}") from exc
        papers.extend(from_biorxiv(p, label) for p in found)
        counts.append((label, len(found)))
        if not found:
            warnings.append(f"{label} had no preprints in the last {WINDOW_DAYS} days")
    if biorxiv_keywords:
        keywords = [(str(word), int(limit)) for word, limit in biorxiv_keywords]
        try:
            found = biorxiv.fetch_keywords(keywords, start=since, end=today)
        except biorxiv.BiorxivDown as exc:
            raise DigestFailed(f"bioRxiv keywords: {exc}") from exc
        for preprint in found:
            words = ", ".join(f"“{w}”" for w in preprint.matched)
            papers.append(from_biorxiv(preprint, f"bioRxiv {words}"))
        for word, _ in keywords:
            hits = sum(1 for p in found if word in p.matched)
            counts.append((f"bioRxiv “{word}”", hits))
    return Fetched(papers=papers, counts=counts, warnings=warnings)


# --- Duplicates


def _doi_key(doi: str) -> str:
    return doi.strip().lower()


def deduplicate(papers: list[Paper]) -> list[Paper]:
    """One entry per paper: the first seen wins (arXiv before bioRxiv), matched
    by arXiv id, DOI, or normalised title (a preprint posted to both servers
    has two ids and one title)."""
    seen_ids: set[str] = set()
    seen_dois: set[str] = set()
    seen_titles: set[str] = set()
    unique: list[Paper] = []
    for paper in papers:
        title = normalise_title(paper.title)
        doi = _doi_key(paper.doi)
        if (
            (paper.arxiv_id and paper.arxiv_id in seen_ids)
            or (doi and doi in seen_dois)
            or (title and title in seen_titles)
        ):
            continue
        if paper.arxiv_id:
            seen_ids.add(paper.arxiv_id)
        if doi:
            seen_dois.add(doi)
        if title:
            seen_titles.add(title)
        unique.append(paper)
    return unique


def drop_known(user, papers: list[Paper]) -> tuple[list[Paper], int]:
    """`papers` without those already in what `user` can read in the library
    (same arXiv id, link, DOI or normalised title of a paper-like document).
    Returns the rest and how many were dropped."""
    if not papers:
        return [], 0
    pool = visible_to(user)
    ids = {p.arxiv_id for p in papers if p.arxiv_id}
    links = {p.link for p in papers}
    known_ids = set(pool.filter(arxiv_id__in=ids).values_list("arxiv_id", flat=True))
    known_links = set(pool.filter(url__in=links).values_list("url", flat=True))
    known_dois = {_doi_key(d) for d in pool.exclude(doi="").values_list("doi", flat=True)}
    # Titles only of paper-like documents: a note that happens to share a
    # paper's title ("Attention") should not hide the paper.
    paperish = Q(kind__in=[Document.Kind.PAPER, Document.Kind.PDF]) | ~Q(url="")
    known_titles = {
        normalise_title(t) for t in pool.filter(paperish).values_list("title", flat=True)
    }
    kept = []
    for paper in papers:
        if (
            (paper.arxiv_id and paper.arxiv_id in known_ids)
            or paper.link in known_links
            or (paper.doi and _doi_key(paper.doi) in known_dois)
            or ((title := normalise_title(paper.title)) and title in known_titles)
        ):
            continue
        kept.append(paper)
    return kept, len(papers) - len(kept)
