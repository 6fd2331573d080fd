"""Backup → lose everything → restore, with the commands docs/operations.md
gives the operator: afterwards the notes are found by search again, in both
legs, and `kb doctor` finds nothing wrong."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connections

from apps.library.index import tables
from apps.library.ingest.sync import source_sync
from apps.library.models import Source
from apps.library.search import search
from tests.support.processes import manage

pytestmark = pytest.mark.django_db(transaction=True)

NOTE = "The spare key to the allotment shed hangs behind the zebracorn calendar."


def top_paths(owner, query: str) -> list[str]:
    connections.close_all()  # as a new request would: nothing cached from before
    return [r.path for r in search(user=owner, query=query, limit=3).results]


def test_after_backup_clear_and_restore_search_works_and_doctor_passes(
    owner, vault, make_source, embedder, tmp_path
):
    vault.write("garden/shed.md", f"# Shed\n\n{NOTE}\n")
    vault.write("garden/compost.md", "# Compost\n\nTurn the heap every two weeks.\n")
    source_sync(source=make_source(owner, vault), embedder=embedder)
    assert top_paths(owner, "allotment shed key")[0] == "garden/shed.md"

    backup = tmp_path / "backup.sqlite3"
    call_command("backup", str(backup), stdout=StringIO())

    # Everything lost: the collection, its documents and the whole index.
    Source.objects.all().delete()
    tables.clear_all()
    assert top_paths(owner, "allotment shed key") == []

    call_command("restore", str(backup), "--yes", stdout=StringIO())
    call_command("migrate", "--noinput", verbosity=0)

    results = search(user=owner, query="allotment shed key", limit=3).results
    assert results[0].path == "garden/shed.md" and NOTE in results[0].text
    assert set(results[0].legs) == {"keyword", "semantic"}  # both indexes came back
    # A question with none of the note's words still finds it: the vectors work.
    assert top_paths(owner, "where do we keep the key for the garden hut")[0] == "garden/shed.md"
    out = StringIO()
    call_command("kb", "doctor", stdout=out)  # raises CommandError on any problem
    assert "the library is healthy" in out.getvalue()

    # A new process (the restarted web and worker) reads the restored file the same way.
    result = manage("kb", "search", "--user", "olivia", "--json", "allotment shed key")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["results"][0]["path"] == "garden/shed.md"
