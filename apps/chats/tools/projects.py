"""Project tools: the registry's answers to status questions, so "which
projects are paused?" does not depend on which passages a search happens to
return. Each field comes with the passage it was read from, numbered like a
search result, so the answer cites it. On a cloud model only projects whose
note is cloud-allowed are listed, and never a field read from a private
section (apps.projects.selectors)."""

from __future__ import annotations

from apps.chats.tools.context import Passage, ToolError, TurnContext, wrap
from apps.chats.tools.registry import Tool, register, tool_spec
from apps.library.models import Chunk
from apps.library.search import chunk_result
from apps.projects.form import STATUSES
from apps.projects.selectors import (
    ProjectView,
    has_local_only_projects,
    projects_for,
    projects_named_for,
)

LEFT_OUT = "Some projects are in notes kept for local models only and were left out."


def _cite(ctx: TurnContext, view: ProjectView, field: str) -> str:
    evidence = view.evidence.get(field)
    if evidence is None or evidence.chunk_id is None:
        return ""
    chunk = Chunk.objects.select_related("document__source").filter(pk=evidence.chunk_id).first()
    if chunk is None:
        return ""
    return f" [{ctx.number(Passage(result=chunk_result(chunk))).n}]"


def _when(view: ProjectView) -> str:
    return view.last_updated.isoformat() if view.last_updated else "undated"


def _footer(ctx: TurnContext) -> str:
    if ctx.cloud and has_local_only_projects(user=ctx.user):
        ctx.caveat(LEFT_OUT)
        return LEFT_OUT
    return ""


def list_projects(ctx: TurnContext, args: dict) -> str:
    status = str(args.get("status") or "").strip().lower()
    if status and status not in STATUSES:
        raise ToolError(f"status must be one of {', '.join(STATUSES)} (or left out for all)")
    views = projects_for(user=ctx.user, cloud_only=ctx.cloud, status=status)
    footer = _footer(ctx)
    if not views:
        return wrap([f"No {status + ' ' if status else ''}projects in the registry."], footer)
    lines = [
        f"{v.name}: {v.status or 'status not stated'}{_cite(ctx, v, 'status')}"
        f" · updated {_when(v)} · {v.path}"
        for v in views
    ]
    return wrap(lines, footer)


def get_project_status(ctx: TurnContext, args: dict) -> str:
    name = str(args.get("name") or "").strip()
    if not name:
        raise ToolError("get_project_status needs the project's name")
    views = projects_named_for(user=ctx.user, name=name, cloud_only=ctx.cloud)
    footer = _footer(ctx)
    if not views:
        return wrap([f"No project called {name!r} in the registry."], footer)
    if len(views) > 3:
        names = ", ".join(v.name for v in views[:10])
        return wrap([f"{len(views)} projects match {name!r}: {names}. Ask for one."], footer)
    return wrap([project_record(ctx, v) for v in views], footer)


def project_record(ctx: TurnContext, v: ProjectView) -> str:
    """One project's registry record, each field citing the passage it came from."""
    lines = [
        f"Project {v.name} · {v.path} · last updated {_when(v)} (latest version)",
        f"status: {v.status or 'not stated'}{_cite(ctx, v, 'status')}",
        f"reason: {v.reason or 'not stated'}{_cite(ctx, v, 'reason')}",
        f"key result: {v.key_result or 'not stated'}{_cite(ctx, v, 'key_result')}",
        f"next steps: {'; '.join(v.next_steps) or 'none stated'}{_cite(ctx, v, 'next_steps')}",
        f"blockers: {'; '.join(v.blockers) or 'none stated'}{_cite(ctx, v, 'blockers')}",
    ]
    return "\n".join(lines)


def records_for_passages(ctx: TurnContext, passages: list[Passage]) -> list[str]:
    """The registry records of the projects whose notes (any version) these
    passages come from: the first search hands them over with the passages,
    so a status question needs no project tool."""
    families = {(p.result.source_id, p.result.family or p.result.path) for p in passages}
    if not families:
        return []
    return [
        project_record(ctx, v)
        for v in projects_for(user=ctx.user, cloud_only=ctx.cloud)
        if (v.document.source_id, v.document.family or v.path) in families
    ]


register(
    Tool(
        tool_spec(
            "list_projects",
            "The project registry: every project with its current status, read from the "
            "latest version of its note. Use ONLY for questions about project status (which "
            "projects are active, paused, blocked, done, dropped or ideas); for anything else "
            "use search_notes.",
            {"status": {"type": "string", "enum": list(STATUSES)}},
        ),
        list_projects,
    )
)

register(
    Tool(
        tool_spec(
            "get_project_status",
            "Where one named project stands, from the project registry: status, reason, key "
            "result, next steps, blockers and the date, each with the passage it came from. "
            "Use ONLY when asked about a project's status or progress; for anything else use "
            "search_notes.",
            {"name": {"type": "string", "description": "the project's name"}},
            ["name"],
        ),
        get_project_status,
    )
)
