"""Sync of an unchanged vault: what a second run costs.

Writes a vault of N generated notes (default 1,000), syncs it once, then
syncs it again unchanged and prints seconds, embeddings computed and rows
written for both runs (the second should embed and write nothing).

    .venv/bin/python bench/sync_noop.py [--notes 1000]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from _support import bench_user_with_vault, django_in
from _vaults import write_vault


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--notes", type=int, default=1000)
    args = parser.parse_args()

    data = Path(tempfile.mkdtemp(prefix="jarvis-bench-noop-"))
    vaults = data / "vaults"
    folder = vaults / "bench"
    folder.mkdir(parents=True)
    write_vault(folder, args.notes, sections=(1, 2))
    django_in(data, JARVIS_VAULTS_ROOT=str(vaults))

    from django.db import connection

    from apps.library.ingest.sync import source_sync

    _user, source = bench_user_with_vault(folder)

    first = source_sync(source=source)
    print(
        f"first sync: {first.seen} notes, {first.chunks_embedded} embeddings, "
        f"{first.rows_written} rows written, {first.seconds:.1f}s"
    )
    changes_before = connection.connection.total_changes
    started = time.perf_counter()
    second = source_sync(source=source)
    wall = time.perf_counter() - started
    changes = connection.connection.total_changes - changes_before
    print(
        f"unchanged re-sync: {second.seen} notes seen, {second.unchanged} unchanged, "
        f"{second.chunks_embedded} embeddings, {second.rows_written} rows written "
        f"(SQLite total_changes +{changes}), {wall:.2f}s"
    )


if __name__ == "__main__":
    main()
