"""The registry's write path as the worker and the command use it: refresh
the records, then each person's overview document."""

from __future__ import annotations

import logging

from apps.accounts.models import User
from apps.library.services import Embedder
from apps.projects.overview import overview_publish
from apps.projects.registry import RefreshReport, projects_refresh

logger = logging.getLogger(__name__)


def registry_refresh(
    *, owner: User | None = None, again: bool = False, embedder: Embedder | None = None
) -> RefreshReport:
    """Refresh the projects (of `owner`'s collections, or everyone's), then
    every active person's overview: a shared project appears in the
    overviews of everyone who may read its note."""
    report = projects_refresh(owner=owner, again=again)
    for person in User.objects.filter(is_active=True).order_by("pk"):
        try:
            overview_publish(user=person, embedder=embedder)
        except Exception as exc:  # one person's overview never stops the others
            logger.exception("projects: the overview of %s failed", person.username)
            report.problems.append(f"overview of {person.username}: {type(exc).__name__}")
    return report
