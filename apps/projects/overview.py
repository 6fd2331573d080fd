"""The one-page project overview: Markdown built from the registry, as a
person may see it.

Each person's overview is also a document in their library, so search and
chat find it like any note. It lists their local-only projects and their
private-section fields, so it lives in the private folder of its own
collection: owner-only and local-only whatever that collection's sharing or
cloud policy is later set to (a non-folder collection's private folders
cannot be edited). What an MCP client attaches (`jarvis://overview`) is built on demand
with `cloud_only`, never read from that document.
"""

from __future__ import annotations

from apps.library.models import Document, Source
from apps.library.services import DocumentMeta, Embedder, document_add, document_ingest
from apps.projects.models import Status
from apps.projects.selectors import ProjectView, projects_for

OVERVIEW_COLLECTION = "Project overview"
PRIVATE_DIR = "private"
OVERVIEW_PATH = f"{PRIVATE_DIR}/project-overview.md"
ORDER = [
    Status.ACTIVE,
    Status.BLOCKED,
    Status.PAUSED,
    Status.IDEA,
    Status.DONE,
    Status.DROPPED,
]


def _line(text: str) -> str:
    # Note text inside a list item: one line, no Markdown structure of its own.
    return " ".join(str(text).split()).replace("|", "/")


def _item(view: ProjectView) -> list[str]:
    when = view.last_updated.isoformat() if view.last_updated else "undated"
    lines = [f"- **{_line(view.name)}** · updated {when} · `{_line(view.path)}`"]
    if view.reason:
        lines.append(f"  - Why: {_line(view.reason)}")
    if view.key_result:
        lines.append(f"  - Key result: {_line(view.key_result)}")
    if view.next_steps:
        lines.append(f"  - Next: {'; '.join(_line(s) for s in view.next_steps[:3])}")
    if view.blockers:
        lines.append(f"  - Blocked by: {'; '.join(_line(b) for b in view.blockers[:3])}")
    return lines


def overview_markdown(user, *, cloud_only: bool = False) -> str:
    views = projects_for(user=user, cloud_only=cloud_only)
    dates = [v.last_updated for v in views if v.last_updated]
    head = ["---", "type: overview"]
    if dates:
        # The newest project's date, not today's: an unchanged registry gives the same page.
        head.append(f"date: {max(dates).isoformat()}")
    head += ["---", "", "# Project overview", ""]
    if not views:
        return "\n".join([*head, "No projects yet.", ""])
    counts = ", ".join(
        f"{sum(1 for v in views if v.status == s)} {s.label.lower()}"
        for s in ORDER
        if any(v.status == s for v in views)
    )
    noun = "project" if len(views) == 1 else "projects"
    body = [f"{len(views)} {noun}: {counts}.", ""]
    for status in [*ORDER, ""]:
        group = [v for v in views if v.status == status]
        if not group:
            continue
        label = status.label if status else "Status not stated"
        body += [f"## {label} ({len(group)})", ""]
        for view in group:
            body += _item(view)
        body.append("")
    return "\n".join(head + body)


def _overview_collection(user) -> Source:
    source, _ = Source.objects.get_or_create(
        owner=user,
        name=OVERVIEW_COLLECTION,
        defaults={
            "kind": Source.Kind.UPLOADS,
            "sharing": Source.Sharing.OWNER,
            "cloud": Source.Cloud.LOCAL_ONLY,
            "private_dirs": [PRIVATE_DIR],
        },
    )
    if PRIVATE_DIR not in source.private_dirs:
        source.private_dirs = [*source.private_dirs, PRIVATE_DIR]
        source.save(update_fields=["private_dirs"])
    return source


def overview_publish(*, user, embedder: Embedder | None = None) -> Document | None:
    """Write `user`'s overview into their library when it changed; None when
    they have no projects and never had an overview."""
    text = overview_markdown(user)
    exists = Document.objects.filter(
        source__owner=user, source__name=OVERVIEW_COLLECTION, path=OVERVIEW_PATH
    ).exists()
    if not exists and "No projects yet." in text:
        return None
    # At its fixed path: the overview keeps its id (links and mentions of it
    # stay good) and unchanged text is not indexed again.
    added = document_add(
        owner=user,
        source=_overview_collection(user),
        name="project-overview.md",
        data=text.encode("utf-8"),
        meta=DocumentMeta(title="Project overview"),
        kind=Document.Kind.NOTE,
        at=OVERVIEW_PATH,
    )
    if added.unchanged is not None:
        return added.unchanged
    return document_ingest(document=added.document, embedder=embedder)
