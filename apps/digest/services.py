"""The digest's write path: configuring it, claiming a run, and the pipeline.

    fetch arXiv + bioRxiv → deduplicate (title, ids, DOI; against the library)
    → score in batches with the person's model → tiered Markdown digest
    → the digest file and its library document → ≥ 9 in full text,
    8–9 as summary entries, the rest only in the digest document.

Nothing here holds a transaction across a network call, a model call or an
embedding: rows are written in short steps between them. The digest document
is created only once the whole Markdown exists, and removed again if it
cannot be indexed, so a failed run leaves no half-written digest behind; its
Digest row keeps the reason, and the next slot or the catch-up tries again.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from apps.core.errors import JarvisError, Refused
from apps.digest import config as digest_config
from apps.digest.formatting import by_tier, digest_markdown, title_for
from apps.digest.models import Digest, DigestClaim, DigestSettings
from apps.digest.papers import TIERS, DigestFailed, Paper, deduplicate, drop_known, fetch_all
from apps.digest.schedule import current_slot, is_overdue
from apps.digest.scoring import score_papers
from apps.digest.selectors import digest_users, last_success_for, may_run_digest
from apps.digest.shelving import NotShelved, shelve_digest, shelve_full_text, shelve_summary
from apps.instance.models import InstanceSettings, ModelEntry
from apps.instance.selectors import instance_settings
from apps.library.services import PaperPlan, paper_add
from apps.library.tasks import ingest_queue
from apps.llm import ProviderConfig, provider_config_for
from apps.llm.selectors import default_model_for, model_for

logger = logging.getLogger(__name__)

NO_SOURCES = (
    "nothing to fetch: add arXiv categories, bioRxiv categories or keywords in your digest settings"
)


# --- Configuration


_UNSET = object()


def digest_configure(
    *,
    user,
    enabled: bool | None = None,
    arxiv: str | list[str] | None = None,
    biorxiv: str | list[str] | None = None,
    keywords: str | list[str] | None = None,
    model_label: str | None = None,
    research_context: str | None = None,
    folder: str | None = None,
) -> DigestSettings:
    """Change a person's digest settings; arguments left None stay as they are.
    Raises ValidationError (a dict by field) for bad values, Refused without
    the permission. The page and `manage.py digest configure` both come here."""
    if not may_run_digest(user=user):
        raise Refused(f"{user.username} does not have the permission to run the paper digest")
    current = DigestSettings.objects.filter(user=user).first() or DigestSettings(user=user)
    errors: dict[str, list] = {}

    def check(field: str, parse: Callable, value: object) -> object:
        try:
            return parse(value)
        except ValidationError as exc:
            errors[field] = exc.messages
            return _UNSET

    values: dict = {}
    if arxiv is not None:
        values["arxiv_categories"] = check("arxiv", digest_config.parse_arxiv, arxiv)
    if biorxiv is not None:
        values["biorxiv_categories"] = check("biorxiv", digest_config.parse_biorxiv, biorxiv)
    if keywords is not None:
        values["biorxiv_keywords"] = check("keywords", digest_config.parse_keywords, keywords)
    if research_context is not None:
        values["research_context"] = check(
            "research_context", digest_config.clean_context, research_context
        )
    if folder is not None:
        values["folder"] = check("folder", digest_config.clean_folder, folder)
    if model_label is not None:
        values["model_label"] = check(
            "model", lambda v: digest_model_check(user=user, label=v), model_label
        )
    if enabled is not None:
        values["enabled"] = enabled
    if errors:
        raise ValidationError(errors)
    for name, value in values.items():
        setattr(current, name, [list(e) for e in value] if isinstance(value, list) else value)
    current.save()
    return current


def digest_model_check(*, user, label: str) -> str:
    """`label` if `user` may score with it ("" = their default model)."""
    label = (label or "").strip()
    if not label:
        return ""
    try:
        model_for(user=user, label=label)
    except JarvisError as exc:
        raise ValidationError(str(exc)) from exc
    return label


def digest_instance_enable(*, enabled: bool) -> InstanceSettings:
    """The instance switch (admins' scripts; admins also have Django admin)."""
    current = instance_settings()
    current.digest_enabled = enabled
    current.save(update_fields=["digest_enabled"])
    return current


# --- Claims: one run per person at a time


def digest_claim(*, user, trigger: str) -> str | None:
    """Take the person's run claim; its token, or None while another live run holds it.
    One UPDATE with the condition in its WHERE clause: of two processes asking
    at once, SQLite lets exactly one change the row."""
    # get_or_create copes with a row created by another process a moment ago;
    # the conditional UPDATE below is what decides who runs.
    DigestClaim.objects.get_or_create(user=user)
    now = timezone.now()
    stale = now - timedelta(minutes=settings.DIGEST_CLAIM_STALE_MINUTES)
    token = secrets.token_hex(16)
    taken = (
        DigestClaim.objects.filter(user=user)
        .filter(Q(claimed_at__isnull=True) | Q(claimed_at__lt=stale))
        .update(token=token, claimed_at=now, trigger=trigger)
    )
    return token if taken else None


def digest_claim_renew(*, user, token: str) -> bool:
    """Show the run is alive; False when the claim was taken over meanwhile."""
    return bool(
        DigestClaim.objects.filter(user=user, token=token).update(claimed_at=timezone.now())
    )


def digest_claim_release(*, user, token: str) -> None:
    DigestClaim.objects.filter(user=user, token=token).update(token="", claimed_at=None)


# --- Running


@dataclass
class RunResult:
    ran: bool
    digest: Digest | None = None
    reason: str = ""  # why it did not run

    def as_json(self) -> dict:
        return summary_json(self.digest) if self.digest else {"skipped": self.reason}


def summary_json(digest: Digest) -> dict:
    stats = digest.stats or {}
    return {
        "digest_path": str(digest_config.digests_root() / digest.file_path)
        if digest.file_path
        else "",
        "document_id": digest.document_id,
        "fetched": stats.get("fetched", 0),
        "deduplicated": stats.get("deduplicated", 0),
        "scored": stats.get("scored", 0),
        "tiers": {tier: digest.tier_count(tier) for tier in TIERS},
        "full_text": stats.get("full_text", 0),
        "summaries": stats.get("summaries", 0),
        "failed_batches": stats.get("failed_batches", 0),
    }


def digest_run(
    *,
    user,
    trigger: str,
    slot: datetime | None = None,
    now: datetime | None = None,
    unless_done_since: datetime | None = None,
    embedder=None,
) -> RunResult:
    """Make the person's digest now. Returns RunResult(ran=False) when another
    run holds the claim or, with `unless_done_since`, when a digest succeeded
    since then (the weekly run and the catch-up both pass the slot, so
    whichever comes second does nothing). Raises DigestFailed with the reason
    (the Digest row records it too)."""
    token = digest_claim(user=user, trigger=trigger)
    if token is None:
        logger.info("digest for %s: another run is in progress; not starting", user)
        return RunResult(ran=False, reason="another digest run for this person is in progress")
    try:
        if unless_done_since is not None:
            last = last_success_for(user=user)
            if last is not None and last >= unless_done_since:
                return RunResult(ran=False, reason="this slot's digest is already done")
        # Holding the claim, any digest still "running" belongs to a dead worker.
        Digest.objects.filter(owner=user, status=Digest.Status.RUNNING).update(
            status=Digest.Status.FAILED,
            error="interrupted: the worker stopped during this run",
            finished_at=timezone.now(),
        )
        digest = Digest.objects.create(
            owner=user, trigger=trigger, slot=slot, started_at=now or timezone.now()
        )

        def heartbeat() -> None:
            if not digest_claim_renew(user=user, token=token):
                raise DigestFailed("another run took this digest over (this one stalled)")

        try:
            _make(digest, now=now or timezone.now(), heartbeat=heartbeat, embedder=embedder)
        except Exception as exc:
            reason = str(exc) if isinstance(exc, DigestFailed) else f"unexpected error: {exc}"
            digest.status, digest.error = Digest.Status.FAILED, reason
            digest.finished_at = timezone.now()
            digest.save(update_fields=["status", "error", "finished_at", "model_label"])
            logger.warning("digest %s for %s failed: %s", digest.pk, user, reason)
            raise
        return RunResult(ran=True, digest=digest)
    finally:
        digest_claim_release(user=user, token=token)


def scoring_model(user, conf: DigestSettings) -> ModelEntry:
    if conf.model_label:
        try:
            return model_for(user=user, label=conf.model_label)
        except JarvisError as exc:
            raise DigestFailed(f"the scoring model {conf.model_label}: {exc}") from exc
    model = default_model_for(user=user)
    if model is None:
        raise DigestFailed(
            "no model to score with: choose one in your digest settings "
            "(or ask an admin to set up a model)"
        )
    return model


def provider_config(model: ModelEntry) -> ProviderConfig:
    try:
        return provider_config_for(model, timeout=float(settings.DIGEST_MODEL_TIMEOUT_SECONDS))
    except JarvisError as exc:
        raise DigestFailed(f"the scoring model {model.label}: {exc}") from exc


def _file_target(user, conf: DigestSettings, day) -> tuple[Path, Path]:
    """(where the digest file goes, the temporary name it is written under first)."""
    try:
        folder = digest_config.folder_path(user.pk, conf.folder)
    except (ValidationError, OSError) as exc:
        message = exc.messages[0] if isinstance(exc, ValidationError) else str(exc)
        raise DigestFailed(f"the digest folder cannot be used: {message}") from exc
    name = f"digest-{day.isoformat()}"
    target, n = folder / f"{name}.md", 1
    while target.exists():
        n += 1
        target = folder / f"{name}-{n}.md"
    return target, target.with_name(f".{target.name}.partial")


def _make(digest: Digest, *, now: datetime, heartbeat: Callable[[], None], embedder) -> None:
    user = digest.owner
    conf = DigestSettings.objects.filter(user=user).first()
    if conf is None or not conf.has_sources:
        raise DigestFailed(NO_SOURCES)
    model = scoring_model(user, conf)
    provider = provider_config(model)
    digest.model_label = model.label
    local = timezone.localtime(now)
    day = local.date()

    fetched = fetch_all(
        arxiv_categories=conf.arxiv_categories,
        biorxiv_categories=conf.biorxiv_categories,
        biorxiv_keywords=conf.biorxiv_keywords,
        today=day,
    )
    if not fetched.papers:
        # A week with nothing at all is an API glitch far more often than a quiet week.
        raise DigestFailed("the paper sources returned no papers for the last week")
    heartbeat()
    unique = deduplicate(fetched.papers)
    fresh, known = drop_known(user, unique)
    for number, paper in enumerate(fresh, 1):
        paper.n = number

    failures = (
        score_papers(
            fresh,
            config=provider,
            context_length=model.context_length,
            research_context=conf.research_context,
            heartbeat=heartbeat,
        )
        if fresh
        else []
    )
    failed = [f.as_dict() for f in failures]
    markdown = digest_markdown(
        day=day,
        generated=local,
        model_label=model.label,
        papers=fresh,
        counts=fetched.counts,
        fetched=len(fetched.papers),
        deduplicated=len(fresh),
        known=known,
        failures=failed,
    )
    groups = by_tier(fresh)
    stats = {
        "fetched": len(fetched.papers),
        "deduplicated": len(fresh),
        "already_in_library": known,
        "scored": sum(len(groups[t]) for t in TIERS),
        "tiers": {t: len(groups[t]) for t in TIERS},
        "full_text": 0,
        "summaries": 0,
        "failed_batches": len(failures),
    }

    # The file appears under its real name only once its document is indexed.
    heartbeat()
    target, partial = _file_target(user, conf, day)
    try:
        partial.write_text(markdown, encoding="utf-8")
        document = shelve_digest(
            user, markdown=markdown, title=title_for(day), day=day, embedder=embedder
        )
        partial.replace(target)
    except (NotShelved, OSError) as exc:
        partial.unlink(missing_ok=True)
        raise DigestFailed(f"the digest could not be saved: {exc}") from exc

    with transaction.atomic():
        digest.title = title_for(day)
        digest.markdown = markdown
        digest.file_path = target.relative_to(digest_config.digests_root().resolve()).as_posix()
        digest.document = document
        digest.items = [p.as_item() for p in fresh]
        digest.stats = stats
        digest.failed_batches = failed
        digest.warnings = list(fetched.warnings)
        # Done: the digest exists and is searchable. Shelving the best papers
        # below adds to it; a failure there is a warning, never a failed digest.
        digest.status = Digest.Status.OK
        digest.save()

    warnings: list[str] = []
    try:
        _shelve_papers(
            user,
            groups,
            day=day,
            stats=stats,
            heartbeat=heartbeat,
            embedder=embedder,
            warnings=warnings,
        )
    except Exception as exc:
        # The digest stands (it is written and searchable); what could not be
        # shelved is said on it rather than turning the whole run into a failure.
        logger.exception("digest %s for %s: adding papers to the library stopped", digest.pk, user)
        warnings.append(f"adding the best papers to the library stopped: {exc}")
    digest.items = [p.as_item() for p in fresh]
    digest.stats = stats
    digest.warnings = [*digest.warnings, *warnings]
    digest.finished_at = timezone.now()
    digest.save(update_fields=["items", "stats", "warnings", "finished_at"])


def _shelve_papers(
    user, groups, *, day, stats: dict, heartbeat, embedder, warnings: list[str]
) -> None:
    """Must-reads in full text (else a summary entry, with a warning), worth-
    reading as summary entries. Counts go into `stats`, warnings into `warnings`."""

    def summary(paper, warning: str = "") -> None:
        try:
            document = shelve_summary(
                user, paper, digest_day=day, warning=warning, embedder=embedder
            )
        except NotShelved as exc:
            message = f"“{paper.title}”: no summary entry either ({exc})"
            paper.note = " ".join(filter(None, [paper.note, message]))
            warnings.append(message)
            logger.warning("digest for %s: %s", user, message)
            return
        paper.library_mode, paper.document_id = "summary", document.pk
        stats["summaries"] += 1

    for paper in groups["must"]:
        heartbeat()
        try:
            document = shelve_full_text(user, paper, embedder=embedder)
        except NotShelved as exc:
            message = f"“{paper.title}”: full text not added ({exc}); kept as a summary entry"
            paper.note = message
            warnings.append(message)
            logger.warning("digest for %s: %s", user, message)
            summary(paper, warning=f"The full text could not be added: {exc}.")
            continue
        if document is None:
            paper.note = "already in your library"
            continue
        paper.library_mode, paper.document_id = "full_text", document.pk
        stats["full_text"] += 1
    for paper in groups["worth"]:
        heartbeat()
        summary(paper)


# --- Adding one paper from a digest page


def digest_paper_add(*, user, digest: Digest, number: int, replace: bool = False) -> object:
    """Add paper `number` of `digest` to the person's library: an arXiv paper
    through the library's add-paper flow (indexed by the worker), a bioRxiv
    preprint as a summary entry. Returns the library's Added/PaperPlan or the
    new Document. Raises Refused."""
    item = next((i for i in digest.items if int(i.get("n") or 0) == number), None)
    if item is None:
        raise Refused("that paper is not in this digest")
    paper = Paper.from_item(item)
    if paper.arxiv_id:
        outcome = paper_add(owner=user, text=paper.arxiv_id, replace=replace)
        if isinstance(outcome, PaperPlan):
            ingest_queue(outcome.document, meta=outcome.document_meta)
        return outcome
    day = timezone.localtime(digest.started_at).date()
    try:
        return shelve_summary(user, paper, digest_day=day)
    except NotShelved as exc:
        raise Refused(str(exc)) from exc


# --- When digests are due


def digests_due(now: datetime) -> tuple[datetime | None, list]:
    """(the slot `now` falls in, the people whose digest runs in it), or
    (None, []) outside the slot or while the instance switch is off."""
    switches = instance_settings()
    if not switches.digest_enabled:
        return None, []
    slot = current_slot(timezone.localtime(now), switches.digest_weekday, switches.digest_hour)
    return (slot, digest_users()) if slot is not None else (None, [])


def digests_overdue(now: datetime) -> list[tuple[object, datetime]]:
    """(person, missed slot) for everyone whose last successful digest is older
    than the latest slot. People without any successful digest have no
    baseline and wait for the next slot."""
    switches = instance_settings()
    if not switches.digest_enabled:
        return []
    local = timezone.localtime(now)
    result = []
    for user in digest_users():
        missed = is_overdue(
            local, last_success_for(user=user), switches.digest_weekday, switches.digest_hour
        )
        if missed is not None:
            result.append((user, missed))
    return result
