"""manage.py restore SOURCE: replace the database with a backup (stop web and worker first)."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.core.backup import restore_database
from apps.core.errors import Refused


class Command(BaseCommand):
    help = "Replace the database with SOURCE after checking its integrity."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("source", type=Path)
        parser.add_argument(
            "--yes", action="store_true", help="confirm: the current database is overwritten"
        )

    def handle(self, *args, **options) -> None:
        if not options["yes"]:
            raise CommandError(
                "this overwrites the current database; stop the web and worker services, "
                "then run again with --yes"
            )
        try:
            restore_database(source=options["source"])
        except Refused as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"restored from {options['source']}; run `manage.py migrate` next")
