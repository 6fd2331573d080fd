"""Reading the registry as a person: which projects they may see (those whose
latest note they may read), which fields they may see (a field read from a
private section is its owner's alone), and, for a cloud model or an MCP
client (`cloud_only`), only projects whose note is cloud-allowed."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

from django.http import Http404

from apps.library.models import Chunk, Document, Source
from apps.library.selectors import visible_to
from apps.projects.form import FIELDS, LIST_FIELDS
from apps.projects.models import Project, ProjectReading, Status


@dataclass
class Evidence:
    """The passage a field came from (None chunk: the frontmatter)."""

    origin: str
    chunk_id: int | None
    section: str
    quote: str


@dataclass
class ProjectView:
    project: Project
    name: str
    status: str
    reason: str = ""
    next_steps: list[str] = field(default_factory=list)
    blockers: list[str] = field(default_factory=list)
    key_result: str = ""
    evidence: dict[str, Evidence] = field(default_factory=dict)
    withheld: int = 0  # fields read from a private section, not shown to this viewer

    @property
    def document(self) -> Document:
        return self.project.document

    @property
    def last_updated(self) -> date | None:
        return self.project.last_updated

    @property
    def path(self) -> str:
        return self.project.document.path

    @property
    def status_label(self) -> str:
        return Status(self.status).label if self.status else "unknown"

    def as_dict(self) -> dict:
        return {
            "id": self.project.pk,
            "name": self.name,
            "status": self.status or None,
            "reason": self.reason or None,
            "next_steps": self.next_steps,
            "blockers": self.blockers,
            "key_result": self.key_result or None,
            "last_updated": self.last_updated.isoformat() if self.last_updated else None,
            "path": self.path,
            "collection": self.project.source.name,
            "document_id": self.project.document_id,
            "evidence": {
                name: {"origin": e.origin, "section": e.section, "quote": e.quote}
                for name, e in self.evidence.items()
            },
        }


def _documents_for(user, cloud_only: bool):
    documents = visible_to(user)
    if cloud_only:
        documents = documents.filter(in_private_dir=False, source__cloud=Source.Cloud.ALLOWED)
    return documents


def _projects_of(user, cloud_only: bool):
    return (
        Project.objects.filter(document__in=_documents_for(user, cloud_only).values("id"))
        .select_related("document", "document__source", "source", "reading")
        .order_by("name", "id")
    )


def _may_see_private(user, project: Project, cloud_only: bool) -> bool:
    return not cloud_only and project.source.owner_id == user.pk


def _chunk_ids(pairs: set[tuple[int, int]]) -> dict[tuple[int, int], int]:
    if not pairs:
        return {}
    documents = {d for d, _ in pairs}
    rows = Chunk.objects.filter(document_id__in=documents).values_list(
        "document_id", "ordinal", "id"
    )
    return {(d, o): c for d, o, c in rows if (d, o) in pairs}


def project_view_for(
    *, user, project: Project, reading: ProjectReading, cloud_only: bool, chunks=None
) -> ProjectView:
    """What `user` may see of one reading of `project`."""
    private_ok = _may_see_private(user, project, cloud_only)
    view = ProjectView(project=project, name=reading.name, status="")
    for name in FIELDS:
        entry = reading.fields.get(name)
        if not entry:
            continue
        if entry.get("private") and not private_ok:
            view.withheld += 1
            continue
        value = entry["value"]
        if name == "status":
            view.status = value
        elif name in LIST_FIELDS:
            setattr(view, name, list(value))
        else:
            setattr(view, name, value)
        ordinal = entry.get("ordinal")
        chunk = None
        if ordinal is not None:
            key = (reading.document_id, ordinal)
            chunk = (chunks or _chunk_ids({key})).get(key)
        view.evidence[name] = Evidence(
            origin=entry.get("origin", ""),
            chunk_id=chunk,
            section=entry.get("section", ""),
            quote=entry.get("quote", ""),
        )
    return view


def projects_for(*, user, cloud_only: bool = False, status: str = "") -> list[ProjectView]:
    """The projects `user` may see (cloud-allowed ones only with `cloud_only`),
    as they may see them, optionally only those with `status`."""
    projects = list(_projects_of(user, cloud_only))
    pairs = {
        (p.reading.document_id, e["ordinal"])
        for p in projects
        for e in p.reading.fields.values()
        if e.get("ordinal") is not None
    }
    chunks = _chunk_ids(pairs)
    views = [
        project_view_for(
            user=user, project=p, reading=p.reading, cloud_only=cloud_only, chunks=chunks
        )
        for p in projects
    ]
    if status:
        views = [v for v in views if v.status == status]
    return views


def project_for(*, user, pk: int) -> Project:
    # 404, not 403: a project whose note you may not read does not exist for you.
    project = _projects_of(user, False).filter(pk=pk).first()
    if project is None:
        raise Http404("no such project")
    return project


def projects_named_for(*, user, name: str, cloud_only: bool = False) -> list[ProjectView]:
    """Projects called `name`: an exact name (any case) first, else names or
    note paths that contain it."""
    wanted = " ".join(name.split()).lower()
    if not wanted:
        return []
    views = projects_for(user=user, cloud_only=cloud_only)
    exact = [v for v in views if v.name.lower() == wanted]
    if exact:
        return exact
    return [v for v in views if wanted in v.name.lower() or wanted in v.path.lower()]


@dataclass
class TimelineRow:
    document: Document
    date: date | None
    status: str
    changed: bool  # the status differs from the previous version's
    is_latest: bool


def timeline_for(*, user, project: Project, cloud_only: bool = False) -> list[TimelineRow]:
    """Every version of the project's note `user` may read, oldest first, with
    the status each one states (a status read from a private section shows
    only to its owner)."""
    members = _documents_for(user, cloud_only).filter(source=project.source)
    if project.family.startswith("doc:"):
        members = members.filter(pk=project.document_id)
    else:
        members = members.filter(family=project.family)
    readings = {
        r.document_id: r
        for r in ProjectReading.objects.filter(document__in=members).select_related("document")
    }
    ordered = sorted(
        (r.document for r in readings.values()),
        key=lambda d: (d.shown_date is not None, d.shown_date or d.created_at.date(), d.pk),
    )
    rows: list[TimelineRow] = []
    previous = None
    for document in ordered:
        view = project_view_for(
            user=user, project=project, reading=readings[document.pk], cloud_only=cloud_only
        )
        rows.append(
            TimelineRow(
                document=document,
                date=document.shown_date,
                status=view.status,
                changed=previous is not None and view.status != previous,
                is_latest=document.pk == project.document_id,
            )
        )
        previous = view.status
    return rows


def has_local_only_projects(*, user) -> bool:
    """Does `user` see projects a cloud model may not (to say some were left out)?"""
    return _projects_of(user, False).count() > _projects_of(user, True).count()
