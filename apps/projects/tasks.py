"""The registry's periodic refresh: cheap when nothing changed (each note is
read again only when its content hash changed)."""

from __future__ import annotations

from apps.core.jobs import periodic_job
from apps.core.schedules import Cron
from apps.projects.services import registry_refresh


@periodic_job(
    name="projects_refresh",
    title="Refresh the project registry and overviews",
    # Five minutes after each ten, so a folder sync at :00 or :30 has landed.
    schedule=Cron("every 10 minutes (at :05, :15, …)", minute="5-59/10"),
)
def projects_refresh_job() -> str:
    return registry_refresh().summary()
