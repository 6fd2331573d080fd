"""Reads of the digest, always scoped to the person asking."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Q, QuerySet
from django.shortcuts import get_object_or_404

from apps.accounts.models import User
from apps.accounts.permissions import RUN_PAPER_DIGEST
from apps.core.markdown import render_markdown
from apps.digest.formatting import paper_block, skim_text, unscored_text
from apps.digest.models import Digest, DigestSettings
from apps.digest.papers import TIER_TITLES, Paper
from apps.instance.selectors import instance_settings
from apps.library.models import Document
from apps.library.selectors import visible_to


def digests_for(*, user) -> QuerySet[Digest]:
    """The person's own digests, newest first (nobody reads anyone else's)."""
    if not user.is_authenticated:
        return Digest.objects.none()
    return Digest.objects.filter(owner=user).order_by("-started_at", "-id")


def digest_for(*, user, pk: int) -> Digest:
    # 404, not 403: another person's digest does not exist for you.
    return get_object_or_404(digests_for(user=user), pk=pk)


def digest_settings_for(*, user) -> DigestSettings | None:
    return DigestSettings.objects.filter(user=user).first()


def may_run_digest(*, user) -> bool:
    return bool(user.is_active and user.has_perm(RUN_PAPER_DIGEST))


def may_use_digest(*, user) -> bool:
    """The instance switch is on and the person has the permission."""
    return bool(
        user.is_authenticated and instance_settings().digest_enabled and may_run_digest(user=user)
    )


def last_success_for(*, user) -> datetime | None:
    """When the person's last successful digest started: the catch-up baseline."""
    return (
        Digest.objects.filter(owner=user, status=Digest.Status.OK)
        .order_by("-started_at")
        .values_list("started_at", flat=True)
        .first()
    )


def digest_users() -> list[User]:
    """People whose digest the scheduler runs: active, allowed, switched on,
    with something to fetch. (The instance switch is the caller's to check.)"""
    configured = DigestSettings.objects.filter(enabled=True, user__is_active=True).select_related(
        "user"
    )
    return [s.user for s in configured if s.has_sources and may_run_digest(user=s.user)]


def admins() -> QuerySet[User]:
    """Whom to ask to switch the digest on or grant the permission."""
    return User.objects.filter(is_active=True, is_staff=True).order_by("username")


@dataclass
class PaperView:
    paper: Paper
    document: Document | None  # the library entry the person can open, if any
    html: str = ""  # the paper's Markdown, rendered (digest_sections_for)


def papers_for(*, user, digest: Digest) -> list[PaperView]:
    """The digest's papers, each with the library document it matches in what
    `user` can read (by arXiv id, link or DOI), so the page can link to it or
    offer to add it. Two queries whatever the digest's size."""
    papers = [Paper.from_item(item) for item in digest.items]
    ids = {p.arxiv_id for p in papers if p.arxiv_id}
    links = {p.link for p in papers if p.link}
    dois = {p.doi for p in papers if p.doi}
    found = visible_to(user).filter(Q(arxiv_id__in=ids) | Q(url__in=links) | Q(doi__in=dois))
    by_key: dict[tuple[str, str], Document] = {}
    # A full-text paper is a better target than a summary entry of the same paper.
    for document in found.order_by("-kind", "-pk"):
        for key in (("a", document.arxiv_id), ("u", document.url), ("d", document.doi.lower())):
            if key[1] and (key not in by_key or document.kind == Document.Kind.PAPER):
                by_key[key] = document
    views = []
    for paper in papers:
        document = (
            by_key.get(("a", paper.arxiv_id))
            or by_key.get(("u", paper.link))
            or by_key.get(("d", paper.doi.lower()))
        )
        views.append(PaperView(paper=paper, document=document))
    return views


@dataclass
class Section:
    tier: str
    title: str
    papers: list[PaperView]


def digest_sections_for(*, user, digest: Digest) -> list[Section]:
    """The digest's papers by tier, for the page, each with its Markdown
    rendered through the one Markdown path (apps.core.markdown)."""
    views = papers_for(user=user, digest=digest)
    sections = []
    for tier in ("must", "worth", "skim", "unscored"):
        chosen = [v for v in views if v.paper.tier == tier]
        if tier != "unscored":
            chosen.sort(key=lambda v: (-(v.paper.score or 0), v.paper.n))
        render = {"must": paper_block, "worth": paper_block, "skim": skim_text}.get(
            tier, unscored_text
        )
        for view in chosen:
            view.html = render_markdown(render(view.paper))
        if chosen or tier != "unscored":
            sections.append(Section(tier=tier, title=TIER_TITLES[tier], papers=chosen))
    return sections
