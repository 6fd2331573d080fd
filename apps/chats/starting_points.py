"""Starting points on the new-chat screen: a few prompts a click puts in the
composer (never sends), drawn from the person's own recent notes and active
projects, then the defaults an admin keeps (StartingPoint, in Django admin).

Only the person's own documents and projects are named (sources they own,
read through the library's visibility rule): a household member's note never
appears on someone else's screen, not even its title. A local-only note may
be named: the screen is the person's, and the prompt goes nowhere until they
send it (and then the usual cloud rules apply to the turn).
"""

from __future__ import annotations

from dataclasses import dataclass

from apps.chats.models import StartingPoint
from apps.library.models import Document
from apps.library.selectors import visible_to
from apps.projects.models import Project, Status
from apps.projects.overview import OVERVIEW_COLLECTION

RECENT_NOTES = 2
RECENT_PROJECTS = 2
DEFAULTS = 4
TITLE_CHARS = 80


@dataclass(frozen=True)
class Suggestion:
    text: str  # what goes into the composer
    kind: str  # "note" | "project" | "default": how the screen marks it


def _short(title: str) -> str:
    title = " ".join(title.split())
    return title if len(title) <= TITLE_CHARS else title[: TITLE_CHARS - 1] + "…"


def _recent_notes(user) -> list[Suggestion]:
    documents = (
        visible_to(user)
        .filter(source__owner=user, status=Document.Status.READY, is_latest=True)
        .exclude(title="")
        # Jarvis's own page of the registry, not a note the person wrote.
        .exclude(source__name=OVERVIEW_COLLECTION)
        .order_by("-created_at", "-id")
        .values_list("title", flat=True)[: RECENT_NOTES * 3]
    )
    seen: list[str] = []
    for title in documents:
        title = _short(title)
        if title not in seen:
            seen.append(title)
    return [Suggestion(f"Summarise “{t}”", "note") for t in seen[:RECENT_NOTES]]


def _recent_projects(user) -> list[Suggestion]:
    projects = (
        Project.objects.filter(
            source__owner=user, document__in=visible_to(user).filter(source__owner=user)
        )
        .exclude(status__in=[Status.DONE, Status.DROPPED])
        .order_by("-last_updated", "-updated_at", "-id")
        .values_list("name", flat=True)[:RECENT_PROJECTS]
    )
    return [Suggestion(f"What's the status of {_short(name)}?", "project") for name in projects]


def starting_points_for(user) -> list[Suggestion]:
    """The person's own first, then the admin's defaults; no prompt twice."""
    if not user.is_authenticated:
        return []
    found = [*_recent_notes(user), *_recent_projects(user)]
    found += [
        Suggestion(text, "default")
        for text in StartingPoint.objects.filter(enabled=True).values_list("text", flat=True)[
            :DEFAULTS
        ]
    ]
    unique: dict[str, Suggestion] = {}
    for suggestion in found:
        unique.setdefault(suggestion.text, suggestion)
    return list(unique.values())
