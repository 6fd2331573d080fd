"""What the MCP tools return, for one person, as plain data.

The app on the other side (Claude Desktop, Claude Code, Cursor) is usually
driven by a hosted model, so only what the person may see AND what may reach
a cloud model ever leaves: every read is made with `cloud_only` (no
local-only collection, no private folder, no private section, nobody else's
private content), and every passage is checked again, in one query, right
before it is returned (`_shareable`): a passage that fails the check is
dropped and logged, never sent. Results carry dates, latest or superseded,
and the path, so the app's model can tell a current fact from an old one.
"""

from __future__ import annotations

import logging

from django.db.models import QuerySet

from apps.core.ids import parse_id
from apps.library.models import Chunk, Document, Source
from apps.library.search import search
from apps.library.selectors import chunks_visible_to, sources_visible_to
from apps.projects.overview import overview_markdown
from apps.projects.selectors import ProjectView, projects_for, projects_named_for, timeline_for

logger = logging.getLogger(__name__)

MODES = {"current": "present", "history": "history", "any": "lookup"}
PAGE_SIZE = 15
MAX_LIMIT = 20


class NotFound(Exception):
    """Nothing the person may share has this id or name (the same answer
    whether it does not exist or may not leave)."""


def shareable_sources(user) -> list[int]:
    """Ids of the collections `user` may read that may reach a cloud model,
    looked up once per call and handed to the checks below."""
    return list(
        sources_visible_to(user).filter(cloud=Source.Cloud.ALLOWED).values_list("id", flat=True)
    )


def shareable_documents(user) -> QuerySet[Document]:
    """The documents that may leave: `visible_to(user)` narrowed to
    cloud-allowed collections and to what is outside private folders."""
    return _documents_in(shareable_sources(user))


def _documents_in(sources: list[int]) -> QuerySet[Document]:
    return Document.objects.filter(source_id__in=sources, in_private_dir=False)


def _shareable(chunk_ids: list[int], sources: list[int]) -> set[int]:
    """The re-check: which of these passages may leave, decided again from
    the database as it is now."""
    if not chunk_ids:
        return set()
    allowed = set(
        Chunk.objects.filter(
            id__in=chunk_ids,
            private=False,
            document__in_private_dir=False,
            document__source_id__in=sources,
        ).values_list("id", flat=True)
    )
    held = set(chunk_ids) - allowed
    if held:
        logger.warning("mcp: %d passages failed the re-check and were held back", len(held))
    return allowed


def _date(document: Document, chunk: Chunk | None = None) -> str | None:
    shown = (chunk.section_date if chunk is not None else None) or document.shown_date
    return shown.isoformat() if shown else None


def _newest_shareable(sources: list[int], documents: list[Document]) -> dict[int, Document]:
    """For each document, the newest version of its family that may leave
    (itself when it is the newest, or stands alone), in one query. Latest is
    per person and per app: a newer version in a private folder or a
    local-only collection does not make a document old for the app, as in
    search (apps.library.versions.search)."""
    newest = {d.pk: d for d in documents}
    keys = {
        (d.source_id, d.family) for d in documents if d.family and not d.family.startswith("file:")
    }
    if not keys:
        return newest
    members = _documents_in(sources).filter(
        source_id__in={s for s, _ in keys},
        family__in={f for _, f in keys},
        status=Document.Status.READY,
    )
    best: dict[tuple[int, str], Document] = {}
    for member in members:
        key = (member.source_id, member.family)
        held = best.get(key)
        if key in keys and (
            held is None or (member.family_position, member.pk) > (held.family_position, held.pk)
        ):
            best[key] = member
    for document in documents:
        newest[document.pk] = best.get((document.source_id, document.family), document)
    return newest


def _superseded_by(document: Document, newer: Document) -> dict | None:
    if newer.pk == document.pk:
        return None
    return {"document_id": newer.pk, "path": newer.path, "date": _date(newer)}


def notes_search(user, query: str, *, mode: str = "current", limit: int = 8) -> dict:
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}")
    limit = max(1, min(int(limit), MAX_LIMIT))
    response = search(user=user, query=query, mode=MODES[mode], limit=limit, cloud_only=True)
    sources = shareable_sources(user)
    allowed = _shareable([r.chunk_id for r in response.results], sources)
    older = {r.document_id for r in response.results if not r.is_latest}
    newest = (
        _newest_shareable(sources, list(Document.objects.filter(pk__in=older))) if older else {}
    )
    results = []
    for r in response.results:
        if r.chunk_id not in allowed:
            continue
        results.append(
            {
                "rank": len(results) + 1,
                "document_id": r.document_id,
                "title": r.title,
                "path": r.path,
                "collection": r.source,
                "date": r.date,
                "date_source": r.date_source,
                "is_latest": r.is_latest,
                "superseded_by": _older_than(r, newest),
                "section": r.section,
                "page": r.page,
                "text": r.text,
            }
        )
    return {"query": query, "mode": mode, "results": results}


def _older_than(result, newest: dict[int, Document]) -> dict | str | None:
    """What superseded a passage: the newer version's id, path and date, or, for
    an older dated section of the same note, search's own words."""
    if result.is_latest:
        return None
    newer = newest.get(result.document_id)
    if newer is not None and newer.pk != result.document_id:
        return {"document_id": newer.pk, "path": newer.path, "date": _date(newer)}
    return result.superseded_by or "a newer dated section of this note"


def document_read(user, document_id: int, *, page: int = 1) -> dict:
    pk = parse_id(document_id)
    sources = shareable_sources(user)
    document = (
        _documents_in(sources).select_related("source").filter(pk=pk).first()
        if pk is not None
        else None
    )
    if document is None:
        raise NotFound(f"document {document_id} not found")
    chunks = list(chunks_visible_to(user, document, cloud_only=True))
    pages = max(1, -(-len(chunks) // PAGE_SIZE))
    page = max(1, int(page))
    shown = chunks[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
    allowed = _shareable([c.pk for c in shown], sources)
    superseded_by = _superseded_by(document, _newest_shareable(sources, [document])[document.pk])
    return {
        "document_id": document.pk,
        "title": document.title,
        "path": document.path,
        "collection": document.source.name,
        "date": _date(document),
        "is_latest": superseded_by is None,
        "superseded_by": superseded_by,
        "page": page,
        "pages": pages,
        "passages": [
            {"section": c.section, "page": c.page, "date": _date(document, c), "text": c.text}
            for c in shown
            if c.pk in allowed
        ],
    }


def _project(user, view: ProjectView, allowed_documents: set[int]) -> dict | None:
    if view.project.document_id not in allowed_documents:
        logger.warning("mcp: project %s failed the re-check and was held back", view.project.pk)
        return None
    data = view.as_dict()
    data.pop("id")
    return data


def projects_list(user, *, status: str = "") -> dict:
    views = projects_for(user=user, cloud_only=True, status=status)
    allowed = set(
        shareable_documents(user)
        .filter(pk__in=[v.project.document_id for v in views])
        .values_list("id", flat=True)
    )
    projects = [p for v in views if (p := _project(user, v, allowed)) is not None]
    return {"status": status or "any", "projects": projects}


def project_status(user, name: str) -> dict:
    views = projects_named_for(user=user, name=name, cloud_only=True)
    if not views:
        raise NotFound(f"no project called {name!r}")
    allowed = set(
        shareable_documents(user)
        .filter(pk__in=[v.project.document_id for v in views])
        .values_list("id", flat=True)
    )
    matches = []
    for view in views[:5]:
        data = _project(user, view, allowed)
        if data is None:
            continue
        data["timeline"] = [
            {
                "date": row.date.isoformat() if row.date else None,
                "status": row.status or None,
                "path": row.document.path,
                "is_latest": row.is_latest,
            }
            for row in timeline_for(user=user, project=view.project, cloud_only=True)
        ]
        matches.append(data)
    if not matches:
        raise NotFound(f"no project called {name!r}")
    return {"matches": matches}


def overview(user) -> str:
    return overview_markdown(user, cloud_only=True)
