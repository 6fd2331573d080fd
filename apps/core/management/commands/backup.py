"""manage.py backup DEST: a consistent copy of the database, safe while Jarvis runs."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.core.backup import backup_database, integrity_check
from apps.core.errors import Refused


class Command(BaseCommand):
    help = "Write a consistent copy of the database to DEST (SQLite online backup)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("dest", type=Path)

    def handle(self, *args, **options) -> None:
        try:
            dest = backup_database(dest=options["dest"])
        except Refused as exc:
            raise CommandError(str(exc)) from None
        check = integrity_check(dest)
        if check != "ok":
            raise CommandError(f"the copy at {dest} failed its integrity check: {check}")
        size = dest.stat().st_size
        self.stdout.write(f"backed up to {dest} ({size / 1_048_576:.1f} MiB, integrity ok)")
        self.stdout.write(
            "The database is one part of a backup: also copy the data dir's key files, "
            "uploads and drafts (docs/operations.md)."
        )
