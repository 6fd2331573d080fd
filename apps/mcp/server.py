"""The MCP server (official `mcp` SDK): four tools and one resource over the
library and the project registry, always as one person.

Who that person is comes from `acting_as` (a context variable): the stdio
command sets it once for the process (`manage.py mcp --user USER`); the
HTTP endpoint sets it per request from the bearer token (apps.mcp.http).
Tasks and worker threads the SDK starts inherit it; a call with nobody set
is refused. Everything a tool returns goes through apps.mcp.reads, which
returns only what the person may see and may send to a cloud model.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any, Literal

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from apps.accounts.models import User
from apps.mcp import reads

_acting_as: ContextVar[int | None] = ContextVar("jarvis_mcp_user", default=None)

INSTRUCTIONS = """\
Jarvis is a household's notes assistant. These tools return evidence from the \
person's notes, not answers: passages with their path, their date and whether \
they are the latest version of their document. Prefer the latest version; when \
a passage is superseded, say so and give its date. Use get_project_status and \
list_projects only for questions about where projects stand. Only notes the \
person shares with cloud models are reachable here."""


@contextlib.contextmanager
def acting_as(user_id: int) -> Iterator[None]:
    token = _acting_as.set(user_id)
    try:
        yield
    finally:
        _acting_as.reset(token)


def current_user() -> User:
    user_id = _acting_as.get()
    user = User.objects.filter(pk=user_id, is_active=True).first() if user_id else None
    if user is None:
        raise ToolError("not signed in")
    return user


def _call(function, *args, **kwargs):
    try:
        return function(current_user(), *args, **kwargs)
    except (reads.NotFound, ValueError) as exc:
        raise ToolError(str(exc)) from exc


def search_notes(
    query: str, mode: Literal["current", "history", "any"] = "current", limit: int = 8
) -> dict[str, Any]:
    """Search the person's notes, papers and saved pages. mode: "current" searches only
    the latest version of each document (what is true now); "history" returns every
    version of the matching documents in date order (how something changed); "any"
    searches everything. Each result has its path, date, whether it is the latest
    version (and what superseded it) and the passage text. limit: 1-20 (default 8)."""
    return _call(reads.notes_search, query, mode=mode, limit=limit)


def get_document(document_id: int, page: int = 1) -> dict[str, Any]:
    """Read one document (by the document_id a search returned) in reading order,
    15 passages per page, with its path, date and whether it is the latest version."""
    return _call(reads.document_read, document_id, page=page)


def list_projects(
    status: Literal["active", "paused", "blocked", "done", "dropped", "idea"] | None = None,
) -> dict[str, Any]:
    """The project registry: every project with its status (active, paused, blocked,
    done, dropped, idea), the reason when the note states one, key result, next steps,
    blockers, last updated date and the note's path. Optionally only one status.
    Use only for questions about project status."""
    return _call(reads.projects_list, status=status or "")


def get_project_status(name: str) -> dict[str, Any]:
    """Where one project stands (by name): status, stated reason, key result, next
    steps, blockers, last updated, the passage each came from, and the timeline of
    its status across versions of its note. Use only for questions about a project's
    status or progress."""
    return _call(reads.project_status, name)


def overview() -> str:
    """A one-page Markdown overview of the person's projects, grouped by status."""
    return reads.overview(current_user())


def build_server() -> MCPServer:
    server = MCPServer("Jarvis", instructions=INSTRUCTIONS)
    for tool in (search_notes, get_document, list_projects, get_project_status):
        server.add_tool(tool)
    server.resource(
        "jarvis://overview",
        name="overview",
        title="Project overview",
        description="One page: the person's projects grouped by status.",
        mime_type="text/markdown",
    )(overview)
    return server
