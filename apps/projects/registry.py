"""Building the registry: find the project notes, read each version once
(again only when it changes), and keep one record per project from its
newest version.

Reading a note: its frontmatter first (taken as it is), then the owner's
local model when one is configured, then rules for whatever is still empty.
Every step only ever fills a field with what the note states (each checked
by apps.projects.form), so filling gaps from the next step never invents.
The record's date is the note's date as the library decided it; which
version is newest is the library's `is_latest`: no model decides either.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass, field

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from apps.core.errors import JarvisError
from apps.library.models import Document, Source
from apps.library.selectors import under
from apps.llm import ProviderConfig, ProviderError, provider_config_for
from apps.projects.extraction.frontmatter import project_name, read_frontmatter
from apps.projects.extraction.model import ModelUnusable, read_by_model, reading_model_for
from apps.projects.extraction.rules import read_by_rules
from apps.projects.form import Reading
from apps.projects.models import Project, ProjectReading
from apps.projects.note import load_note

logger = logging.getLogger(__name__)

PROJECT_TYPE = "project"


@dataclass
class RefreshReport:
    read: int = 0
    unchanged: int = 0
    projects: int = 0
    removed: int = 0
    problems: list[str] = field(default_factory=list)

    def summary(self) -> str:
        line = (
            f"{self.projects} projects; read {self.read} notes, "
            f"{self.unchanged} unchanged, {self.removed} removed"
        )
        if self.problems:
            line += f"; {len(self.problems)} problems (first: {self.problems[0]})"
        return line


def project_notes(owner=None) -> list[Document]:
    """Every indexed note that is a project: `type: project` in its
    frontmatter, or a note in a folder its collection marks as projects."""
    with_dirs = Source.objects.exclude(project_dirs=[])
    notes = Document.objects.filter(status=Document.Status.READY, kind=Document.Kind.NOTE).filter(
        Q(category=PROJECT_TYPE) | Q(source__in=with_dirs)
    )
    if owner is not None:
        notes = notes.filter(source__owner=owner)
    return [
        note
        for note in notes.select_related("source", "source__owner").order_by("id")
        if note.category == PROJECT_TYPE or under(note.path, note.source.project_dirs)
    ]


def family_key(document: Document) -> str:
    return document.family or f"doc:{document.pk}"


class _Reader:
    """Reads notes for one refresh; the owner's model is looked up once each."""

    def __init__(self, *, use_model: bool = True) -> None:
        self.use_model = use_model
        self.configs: dict[int, tuple[ProviderConfig | None, str]] = {}

    def _config(self, owner) -> tuple[ProviderConfig | None, str]:
        if owner.pk not in self.configs:
            model = reading_model_for(owner) if self.use_model else None
            config = None
            if model is not None:
                try:
                    config = provider_config_for(model)
                except JarvisError as exc:  # a key the current Fernet keys cannot read
                    logger.warning("projects: %s cannot be used: %s", model.label, exc)
            self.configs[owner.pk] = (config, model.label if config is not None else "")
        return self.configs[owner.pk]

    def read(self, document: Document) -> Outcome:
        note = load_note(document)
        reading = read_frontmatter(note)
        read_by = ["frontmatter"] if reading.fields else []
        notes: list[str] = []
        provisional = False
        config, label = self._config(document.source.owner)
        if config is not None:
            try:
                reading.fill(read_by_model(note, config))
                read_by.append(f"model {label}")
            except (ModelUnusable, ProviderError) as exc:
                message = exc.message if isinstance(exc, ProviderError) else str(exc)
                notes.append(f"the model could not read it ({message}); rules filled it in")
                provisional = isinstance(exc, ProviderError)  # the model may be back later
        reading.fill(read_by_rules(note))
        if any(f.origin == "rules" for f in reading.fields.values()):
            read_by.append("rules")
        return Outcome(
            reading=reading,
            name=project_name(note),
            read_by=" + ".join(read_by) or "rules",
            notes=notes + reading.rejected,
            provisional=provisional,
        )


@dataclass
class Outcome:
    reading: Reading
    name: str
    read_by: str
    notes: list[str]
    provisional: bool


def _save_reading(document: Document, reader: _Reader) -> ProjectReading:
    outcome = reader.read(document)  # slow (a model call): no transaction yet
    status = outcome.reading.fields.get("status")
    with transaction.atomic():
        row, _ = ProjectReading.objects.update_or_create(
            document=document,
            defaults={
                "content_hash": document.content_hash,
                "name": outcome.name,
                "status": status.value if status else "",
                "fields": {name: f.as_dict() for name, f in outcome.reading.fields.items()},
                "read_by": outcome.read_by[:300],
                "notes": outcome.notes[:20],
                "provisional": outcome.provisional,
                "read_at": timezone.now(),
            },
        )
    return row


def _newest(members: list[Document]) -> Document:
    latest = [m for m in members if m.is_latest] or members
    return max(latest, key=lambda d: (d.effective_date is not None, d.effective_date, d.pk))


def projects_refresh(*, owner=None, again: bool = False, use_model: bool = True) -> RefreshReport:
    """Bring the registry up to date (for one person's collections, or all).
    `again` reads every note again even when unchanged."""
    report = RefreshReport()
    reader = _Reader(use_model=use_model)
    families: dict[tuple[int, str], list[Document]] = defaultdict(list)
    readings: dict[int, ProjectReading] = {}
    notes = project_notes(owner)
    known = {r.document_id: r for r in ProjectReading.objects.filter(document__in=notes)}
    for document in notes:
        families[(document.source_id, family_key(document))].append(document)
        current = known.get(document.pk)
        fresh = current is not None and current.content_hash == document.content_hash
        if fresh and not again and not current.provisional:
            readings[document.pk] = current
            report.unchanged += 1
            continue
        try:
            readings[document.pk] = _save_reading(document, reader)
            report.read += 1
        except Exception as exc:  # one unreadable note never stops the others
            logger.exception("projects: reading document %s failed", document.pk)
            report.problems.append(f"{document.path}: {type(exc).__name__}")
    kept: set[int] = set()
    for (source_id, family), members in families.items():
        newest = _newest(members)
        reading = readings.get(newest.pk)
        if reading is None:
            continue
        project, _ = Project.objects.update_or_create(
            source_id=source_id,
            family=family,
            defaults={
                "document": newest,
                "reading": reading,
                "name": reading.name,
                "status": reading.status,
                "last_updated": newest.shown_date,
                "updated_at": timezone.now(),
            },
        )
        kept.add(project.pk)
    gone = Project.objects.exclude(pk__in=kept)
    if owner is not None:
        gone = gone.filter(source__owner=owner)
    report.removed = gone.count()
    gone.delete()
    stale = ProjectReading.objects.exclude(document__in=[n.pk for n in notes])
    if owner is not None:
        stale = stale.filter(document__source__owner=owner)
    stale.delete()
    report.projects = len(kept)
    return report
