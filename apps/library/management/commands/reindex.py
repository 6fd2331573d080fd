"""manage.py reindex: re-embed every chunk with the configured model and swap it in;
`--fts` rebuilds only the keyword index from the stored text (nothing embedded)."""

from __future__ import annotations

import time

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from apps.core.errors import JarvisError
from apps.library.index import fts
from apps.library.index.embeddings import EmbeddingUnavailable
from apps.library.index.reindex import reindex


class Command(BaseCommand):
    help = "Re-embed every chunk from its stored text into a fresh vector index, then swap it in."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--fts",
            action="store_true",
            help="rebuild only the keyword index from the stored passages (no embedding)",
        )
        parser.add_argument(
            "--force",
            action="store_true",
            help="start even if an earlier reindex is marked running",
        )

    def handle(self, *args, **options) -> None:
        started = time.monotonic()
        if options["fts"]:
            with transaction.atomic():
                rows = fts.rebuild()
            self.stdout.write(
                f"rebuilt the keyword index: {rows} passages in {time.monotonic() - started:.1f}s"
            )
            return
        last = [0.0]

        def progress(done: int, total: int) -> None:
            now = time.monotonic()
            if now - last[0] >= 2 or done == total:
                last[0] = now
                share = 100 * done / total if total else 100
                self.stdout.write(f"  embedded {done}/{total} chunks ({share:.0f}%)")

        self.stdout.write(
            "re-embedding every chunk; search keeps using the current index meanwhile"
        )
        try:
            report = reindex(progress=progress, force=options["force"])
        except (JarvisError, EmbeddingUnavailable) as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(
            f"reindexed {report.chunks} chunks with {report.model} "
            f"(generation {report.generation}) in {time.monotonic() - started:.1f}s"
        )
