"""manage.py projects: the project registry.

  projects refresh [--user USER] [--again]
  projects list --user USER [--status STATUS] [--cloud-only] [--json]

`refresh` reads new and changed project notes (all of them with --again)
and rewrites the overviews; `list` shows the registry as USER may see it
(--cloud-only: as a cloud model or an MCP client would).
"""

from __future__ import annotations

import json

from django.core.management.base import CommandParser

from apps.accounts.commands import user_named
from apps.core.commands import SubcommandCommand
from apps.projects.form import STATUSES
from apps.projects.selectors import projects_for
from apps.projects.services import registry_refresh


class Command(SubcommandCommand):
    help = "Refresh and list the project registry."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="noun", required=True)
        refresh = sub.add_parser("refresh", help="read new and changed project notes")
        refresh.add_argument("--user", help="only this person's collections")
        refresh.add_argument("--again", action="store_true", help="read every note again")
        listing = sub.add_parser("list", help="the projects USER may see")
        listing.add_argument("--user", required=True)
        listing.add_argument("--status", choices=STATUSES)
        listing.add_argument("--cloud-only", action="store_true")
        listing.add_argument("--json", action="store_true")

    def refresh(self, options: dict) -> None:
        owner = user_named(options["user"]) if options["user"] else None
        report = registry_refresh(owner=owner, again=options["again"])
        self.stdout.write(report.summary())

    def list(self, options: dict) -> None:
        user = user_named(options["user"], active=True)
        views = projects_for(
            user=user, cloud_only=options["cloud_only"], status=options["status"] or ""
        )
        if options["json"]:
            self.stdout.write(json.dumps([v.as_dict() for v in views], ensure_ascii=False))
            return
        if not views:
            self.stdout.write("no projects (mark a projects folder or add `type: project`)")
        for view in views:
            when = view.last_updated.isoformat() if view.last_updated else "undated"
            self.stdout.write(f"{view.name:<30} {view.status or '-':<8} {when}  {view.path}")
            if view.reason:
                self.stdout.write(f"    why: {view.reason}")
            if view.key_result:
                self.stdout.write(f"    key result: {view.key_result}")
