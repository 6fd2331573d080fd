"""Incremental sync of a folder source: what a person's vault costs to keep indexed.

Every test writes a small vault, syncs it with the real embedder (counted),
changes something on disk and syncs again, then looks at the rows the
library and its search index hold.
"""

from __future__ import annotations

import io
import json
import os
import pathlib
import shutil

import pytest
from django.core.management import call_command
from django.db import connection

from apps.library.index import tables
from apps.library.ingest.sync import SourceUnavailable, source_sync
from apps.library.models import Chunk, Document, DocumentFile
from apps.library.search import search

pytestmark = pytest.mark.django_db

GARDEN = """# Garden plan

## Tomatoes

Plant the tomatoes in the south bed after the last frost.

## Beans

Runner beans climb the hazel trellis beside the shed.

## Compost

Turn the compost heap every second week and keep it damp.
"""


# --- helpers -------------------------------------------------------------------


def total_changes() -> int:
    connection.ensure_connection()
    return connection.connection.total_changes


def chunk_ids(document: Document | int) -> list[int]:
    document_id = document if isinstance(document, int) else document.pk
    return list(Chunk.objects.filter(document_id=document_id).values_list("id", flat=True))


def index_rows(ids: list[int]) -> dict[str, set[int]]:
    """Which of these chunk ids have a row in the FTS, bit-vector and float-vector tables."""
    generation = tables.index_state().generation
    found: dict[str, set[int]] = {}
    kinds = {
        "fts": (tables.FTS_TABLE, "rowid"),
        "vec": (tables.vec_table(generation), "chunk_id"),
        "emb": (tables.emb_table(generation), "chunk_id"),
    }
    with connection.cursor() as cursor:
        for name, (table, column) in kinds.items():
            found[name] = set()
            for chunk_id in ids:
                cursor.execute(f"SELECT {column} FROM {table} WHERE {column} = %s", [chunk_id])
                found[name].update(row[0] for row in cursor.fetchall())
    return found


def assert_index_mirrors_chunks() -> None:
    """Every Chunk row has exactly one row in each index table, and nothing else does."""
    generation = tables.index_state().generation
    ids = set(Chunk.objects.values_list("id", flat=True))
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT rowid FROM {tables.FTS_TABLE}")
        fts = [row[0] for row in cursor.fetchall()]
        cursor.execute(f"SELECT chunk_id FROM {tables.vec_table(generation)}")
        vec = [row[0] for row in cursor.fetchall()]
        cursor.execute(f"SELECT chunk_id FROM {tables.emb_table(generation)}")
        emb = [row[0] for row in cursor.fetchall()]
    assert sorted(fts) == sorted(ids)
    assert sorted(vec) == sorted(ids)
    assert sorted(emb) == sorted(ids)


def vectors_by_hash(document: Document) -> dict[str, bytes]:
    generation = tables.index_state().generation
    by_id = dict(document.chunks.values_list("id", "text_hash"))
    out: dict[str, bytes] = {}
    with connection.cursor() as cursor:
        for chunk_id, text_hash in by_id.items():
            cursor.execute(
                f"SELECT vector FROM {tables.emb_table(generation)} WHERE chunk_id = %s",
                [chunk_id],
            )
            out[text_hash] = bytes(cursor.fetchone()[0])
    return out


def failed_paths(report) -> set[str]:
    return {failure["path"] for failure in report.failed}


def reason_for(report, path: str) -> str:
    [reason] = [f["reason"] for f in report.failed if f["path"] == path]
    return reason


def texts_found(user, query: str, embedder) -> list[str]:
    return [
        r.text for r in search(user=user, query=query, mode="lookup", embedder=embedder).results
    ]


# --- first sync: what is indexed -----------------------------------------------


def test_first_sync_indexes_notes_and_text_at_any_depth_and_nothing_else(
    owner, vault, make_source, embedder
):
    vault.write("inbox.md", "# Inbox\n\nCall the plumber about the dripping tap.")
    vault.write("projects/alpha/deep/plan.md", "# Plan\n\nShip the bird feeder prototype.")
    vault.write("journal/day.markdown", "# Day\n\nWalked the dog along the canal.")
    vault.write("notes/todo.txt", "Buy seed potatoes and twine.")
    vault.write("skipping-rope.md", "# Skipping rope\n\nOnly folders named skip* are skipped.")
    # None of these may be indexed.
    vault.write(".obsidian/workspace.md", "# Workspace\n\nObsidian's own settings.")
    vault.write(".trash/old.md", "# Old\n\nA note the owner threw away.")
    vault.write("skip_old/archived.md", "# Archived\n\nKept out on purpose.")
    vault.write("projects/skip-drafts/draft.md", "# Draft\n\nAlso kept out, deeper down.")
    vault.write(".hidden.md", "# Hidden\n\nA dotfile note.")
    vault.write_bytes("images/photo.png", b"\x89PNG\r\n\x1a\n" + b"\x00" * 64)
    vault.write("notes/readme.rst", "Not a supported format.")
    source = make_source(owner, vault)

    report = source_sync(source=source, embedder=embedder)

    assert report.seen == 5
    assert report.added == 5
    assert (report.updated, report.unchanged, report.removed) == (0, 0, 0)
    assert report.failed == []
    assert report.chunks_embedded > 0
    assert report.chunks_embedded == embedder.passages == Chunk.objects.count()
    assert report.rows_written > 0
    documents = {d.path: d for d in Document.objects.filter(source=source)}
    assert set(documents) == {
        "inbox.md",
        "projects/alpha/deep/plan.md",
        "journal/day.markdown",
        "notes/todo.txt",
        "skipping-rope.md",
    }
    assert {path: d.kind for path, d in documents.items()} == {
        "inbox.md": "note",
        "projects/alpha/deep/plan.md": "note",
        "journal/day.markdown": "note",
        "notes/todo.txt": "text",
        "skipping-rope.md": "note",
    }
    assert all(d.status == Document.Status.READY for d in documents.values())
    assert all(d.chunks.exists() for d in documents.values())
    assert_index_mirrors_chunks()


# --- unchanged vault: free --------------------------------------------------------


def test_second_sync_of_an_unchanged_vault_embeds_nothing_and_writes_nothing(
    owner, vault, make_source, embedder
):
    vault.write("garden.md", GARDEN)
    vault.write("deep/er/notes.md", "# Notes\n\nThe shed key hangs by the back door.")
    vault.write("list.txt", "eggs\nflour\nmilk")
    source = make_source(owner, vault)
    source_sync(source=source, embedder=embedder)
    passages = embedder.passages
    before = total_changes()

    report = source_sync(source=source, embedder=embedder)

    assert report.seen == 3
    assert report.unchanged == 3
    assert (report.added, report.updated, report.removed) == (0, 0, 0)
    assert report.failed == []
    assert report.chunks_embedded == 0
    assert report.rows_written == 0
    assert embedder.passages == passages
    assert total_changes() == before


def test_touching_a_file_without_changing_its_bytes_embeds_nothing(
    owner, vault, make_source, embedder
):
    path = vault.write("garden.md", GARDEN, mtime=1_700_000_000)
    source = make_source(owner, vault)
    source_sync(source=source, embedder=embedder)
    document = Document.objects.get(source=source)
    ids = chunk_ids(document)
    passages = embedder.passages

    os.utime(path, (1_750_000_000, 1_750_000_000))
    report = source_sync(source=source, embedder=embedder)

    assert report.chunks_embedded == 0
    assert embedder.passages == passages
    assert report.unchanged == 1
    assert (report.added, report.updated, report.removed) == (0, 0, 0)
    assert chunk_ids(document) == ids
    # The new mtime was remembered: the next sync does not even read the file.
    before = total_changes()
    again = source_sync(source=source, embedder=embedder)
    assert again.rows_written == 0
    assert total_changes() == before


# --- changed, deleted and renamed files ---------------------------------------


def test_editing_one_section_re_embeds_only_the_changed_chunk(owner, vault, make_source, embedder):
    vault.write("garden.md", GARDEN, mtime=1_700_000_000)
    vault.write("other.md", "# Other\n\nThe bicycle needs a new chain.")
    source = make_source(owner, vault)
    source_sync(source=source, embedder=embedder)
    document = Document.objects.get(source=source, path="garden.md")
    old_vectors = vectors_by_hash(document)
    assert len(old_vectors) == 3
    passages = embedder.passages

    edited = GARDEN.replace(
        "Runner beans climb the hazel trellis beside the shed.",
        "Broad beans go in the north bed this year instead.",
    )
    vault.write("garden.md", edited, mtime=1_700_000_100)
    report = source_sync(source=source, embedder=embedder)

    assert report.updated == 1
    assert report.unchanged == 1
    assert report.failed == []
    assert report.chunks_embedded == 1
    assert embedder.passages - passages == 1
    assert Document.objects.get(source=source, path="garden.md").pk == document.pk
    new_vectors = vectors_by_hash(document)
    kept = old_vectors.keys() & new_vectors.keys()
    assert len(kept) == 2
    assert len(old_vectors.keys() - new_vectors.keys()) == 1
    assert len(new_vectors.keys() - old_vectors.keys()) == 1
    # The unchanged sections keep exactly the vectors they had.
    assert all(new_vectors[h] == old_vectors[h] for h in kept)
    texts = "\n".join(document.chunks.values_list("text", flat=True))
    assert "Broad beans" in texts
    assert "Runner beans" not in texts
    assert_index_mirrors_chunks()


def test_deleting_a_file_removes_its_document_chunks_and_every_index_row(
    owner, vault, make_source, embedder
):
    vault.write("garden.md", GARDEN)
    vault.write("keep.md", "# Keep\n\nThe bicycle needs a new chain.")
    source = make_source(owner, vault)
    source_sync(source=source, embedder=embedder)
    document = Document.objects.get(source=source, path="garden.md")
    ids = chunk_ids(document)
    kept_ids = chunk_ids(Document.objects.get(source=source, path="keep.md"))
    assert index_rows(ids) == {"fts": set(ids), "vec": set(ids), "emb": set(ids)}

    vault.remove("garden.md")
    report = source_sync(source=source, embedder=embedder)

    assert report.removed == 1
    assert report.failed == []
    assert report.chunks_embedded == 0
    assert not Document.objects.filter(pk=document.pk).exists()
    assert not DocumentFile.objects.filter(source=source, path="garden.md").exists()
    assert not Chunk.objects.filter(id__in=ids).exists()
    assert index_rows(ids) == {"fts": set(), "vec": set(), "emb": set()}
    # The other note is untouched.
    assert chunk_ids(Document.objects.get(source=source, path="keep.md")) == kept_ids
    assert index_rows(kept_ids) == {
        "fts": set(kept_ids),
        "vec": set(kept_ids),
        "emb": set(kept_ids),
    }
    assert_index_mirrors_chunks()
    assert "compost" not in " ".join(texts_found(owner, "compost heap", embedder)).lower()


def test_a_crash_while_removing_a_deleted_file_is_finished_by_the_next_sync(
    owner, vault, make_source, embedder, monkeypatch
):
    vault.write("garden.md", GARDEN)
    vault.write("keep.md", "# Keep\n\nThe bicycle needs a new chain.")
    source = make_source(owner, vault)
    source_sync(source=source, embedder=embedder)
    document = Document.objects.get(source=source, path="garden.md")
    ids = chunk_ids(document)

    vault.remove("garden.md")

    def crash(*args, **kwargs):
        raise RuntimeError("power cut")

    monkeypatch.setattr(tables, "_delete_rows", crash)
    with pytest.raises(RuntimeError, match="power cut"):
        source_sync(source=source, embedder=embedder)
    monkeypatch.undo()

    report = source_sync(source=source, embedder=embedder)

    assert report.failed == []
    assert not Document.objects.filter(pk=document.pk).exists()
    assert not Chunk.objects.filter(id__in=ids).exists()
    assert index_rows(ids) == {"fts": set(), "vec": set(), "emb": set()}
    assert_index_mirrors_chunks()
    assert not any("compost" in t for t in texts_found(owner, "compost heap", embedder))


def test_renaming_and_moving_a_file_keeps_its_document_and_chunks_without_embedding(
    owner, vault, make_source, embedder
):
    vault.write("garden.md", GARDEN)
    vault.write("other.md", "# Other\n\nThe bicycle needs a new chain.")
    source = make_source(owner, vault)
    source_sync(source=source, embedder=embedder)
    document = Document.objects.get(source=source, path="garden.md")
    ids = chunk_ids(document)
    passages = embedder.passages

    vault.rename("garden.md", "archive/2024/garden-plan.md")
    report = source_sync(source=source, embedder=embedder)

    assert report.failed == []
    assert report.chunks_embedded == 0
    assert embedder.passages == passages
    moved = Document.objects.get(source=source, path="archive/2024/garden-plan.md")
    assert moved.pk == document.pk
    assert chunk_ids(moved) == ids
    assert list(
        DocumentFile.objects.filter(source=source, document=moved).values_list("path", flat=True)
    ) == ["archive/2024/garden-plan.md"]
    assert Document.objects.filter(source=source).count() == 2
    assert index_rows(ids) == {"fts": set(ids), "vec": set(ids), "emb": set(ids)}
    assert_index_mirrors_chunks()
    results = search(user=owner, query="compost heap", mode="lookup", embedder=embedder).results
    assert any(r.path == "archive/2024/garden-plan.md" for r in results)


# --- crash safety -----------------------------------------------------------------


def test_a_crash_while_writing_one_document_leaves_its_previous_version_intact(
    owner, vault, make_source, embedder, monkeypatch
):
    vault.write("garden.md", GARDEN, mtime=1_700_000_000)
    vault.write("chores.md", "# Chores\n\nSweep the porch on Saturdays.", mtime=1_700_000_000)
    source = make_source(owner, vault)
    source_sync(source=source, embedder=embedder)
    garden = Document.objects.get(source=source, path="garden.md")
    garden_ids = chunk_ids(garden)
    garden_texts = sorted(garden.chunks.values_list("text", flat=True))

    vault.write(
        "garden.md",
        GARDEN.replace("Turn the compost heap", "Sell the wormery"),
        mtime=1_700_000_100,
    )
    vault.write("chores.md", "# Chores\n\nMop the kitchen floor on Sundays.", mtime=1_700_000_100)
    real_replace = tables.replace_chunks

    def crash_for_garden(document, prepared):
        written = real_replace(document, prepared)  # every row written, then the crash
        if document.path == "garden.md":
            raise RuntimeError("power cut")
        return written

    monkeypatch.setattr(tables, "replace_chunks", crash_for_garden)
    report = source_sync(source=source, embedder=embedder)
    monkeypatch.undo()

    assert failed_paths(report) == {"garden.md"}
    assert "power cut" in reason_for(report, "garden.md")
    # The other edited note went through.
    chores = Document.objects.get(source=source, path="chores.md")
    assert "Mop the kitchen floor" in " ".join(chores.chunks.values_list("text", flat=True))
    # The garden note is exactly as it was, chunks, index rows and all.
    garden.refresh_from_db()
    assert garden.status == Document.Status.READY
    assert chunk_ids(garden) == garden_ids
    assert sorted(garden.chunks.values_list("text", flat=True)) == garden_texts
    assert index_rows(garden_ids) == {
        "fts": set(garden_ids),
        "vec": set(garden_ids),
        "emb": set(garden_ids),
    }
    assert_index_mirrors_chunks()
    assert any("compost heap" in t for t in texts_found(owner, "compost heap", embedder))
    assert not any("wormery" in t for t in texts_found(owner, "wormery", embedder))

    # Next run converges on the new version.
    again = source_sync(source=source, embedder=embedder)
    assert again.failed == []
    assert again.updated == 1
    texts = " ".join(Document.objects.get(pk=garden.pk).chunks.values_list("text", flat=True))
    assert "wormery" in texts
    assert "compost heap" not in texts
    assert_index_mirrors_chunks()


@pytest.mark.django_db(transaction=True)
def test_a_crash_mid_document_outside_any_test_transaction_rolls_back_every_index_row(
    owner, vault, make_source, embedder, monkeypatch
):
    # The same crash with real commits and rollbacks (no test-wide transaction
    # around it), so the FTS5 and vec0 tables' own rollback is what is tested.
    vault.write("garden.md", GARDEN, mtime=1_700_000_000)
    source = make_source(owner, vault)
    source_sync(source=source, embedder=embedder)
    garden = Document.objects.get(source=source, path="garden.md")
    garden_ids = chunk_ids(garden)

    vault.write(
        "garden.md",
        GARDEN.replace("Turn the compost heap", "Sell the wormery"),
        mtime=1_700_000_100,
    )
    real_insert = tables.insert_vectors

    def crash_after_some_rows(chunks, vectors, state):
        real_insert(chunks, vectors, state)
        raise RuntimeError("disk full")

    monkeypatch.setattr(tables, "insert_vectors", crash_after_some_rows)
    report = source_sync(source=source, embedder=embedder)
    monkeypatch.undo()

    assert failed_paths(report) == {"garden.md"}
    assert chunk_ids(garden) == garden_ids
    assert index_rows(garden_ids) == {
        "fts": set(garden_ids),
        "vec": set(garden_ids),
        "emb": set(garden_ids),
    }
    assert_index_mirrors_chunks()
    assert any("compost heap" in t for t in texts_found(owner, "compost heap", embedder))

    again = source_sync(source=source, embedder=embedder)

    assert again.failed == []
    assert "wormery" in " ".join(
        Document.objects.get(pk=garden.pk).chunks.values_list("text", flat=True)
    )
    assert_index_mirrors_chunks()


# --- bad input --------------------------------------------------------------------


def test_binary_and_non_utf8_files_fail_with_a_reason_and_the_rest_syncs(
    owner, vault, make_source, embedder
):
    vault.write_bytes(
        "attachments/image.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))
    )
    vault.write_bytes("notes/recipe.txt", "Café crème brûlée, à la française.".encode("latin-1"))
    vault.write("good.md", "# Good\n\nThe boiler service is due in March.")
    source = make_source(owner, vault)

    report = source_sync(source=source, embedder=embedder)

    assert report.seen == 3
    assert failed_paths(report) == {"attachments/image.md", "notes/recipe.txt"}
    binary_reason = reason_for(report, "attachments/image.md")
    latin_reason = reason_for(report, "notes/recipe.txt")
    assert "binary" in binary_reason
    assert "UTF-8" in latin_reason
    binary = Document.objects.get(source=source, path="attachments/image.md")
    latin = Document.objects.get(source=source, path="notes/recipe.txt")
    for document, reason in ((binary, binary_reason), (latin, latin_reason)):
        assert document.status == Document.Status.FAILED
        assert document.error == reason
        assert not document.chunks.exists()
    good = Document.objects.get(source=source, path="good.md")
    assert good.status == Document.Status.READY
    assert good.chunks.exists()
    assert_index_mirrors_chunks()


def test_malformed_frontmatter_indexes_the_body_with_a_warning(owner, vault, make_source, embedder):
    vault.write(
        "orchard.md",
        "---\ntitle: Orchard\ntags: [unclosed, list\nstatus: : :\n---\n"
        "# Orchard\n\nWater the young apple trees twice a week in July.\n",
    )
    source = make_source(owner, vault)

    report = source_sync(source=source, embedder=embedder)

    assert report.failed == []
    document = Document.objects.get(source=source, path="orchard.md")
    assert document.status == Document.Status.READY
    assert document.error == ""
    assert document.warnings
    assert any("YAML" in warning or "frontmatter" in warning for warning in document.warnings)
    texts = list(document.chunks.values_list("text", flat=True))
    assert any("young apple trees" in text for text in texts)
    assert not any("unclosed" in text for text in texts)
    assert any("apple trees" in t for t in texts_found(owner, "young apple trees", embedder))


def test_a_file_vanishing_or_changing_mid_sync_does_not_stop_the_sync_and_the_next_run_converges(
    owner, vault, make_source, embedder, monkeypatch
):
    vault.write("stays.md", "# Stays\n\nThe gutter needs clearing.", mtime=1_700_000_000)
    vault.write("edited.md", "# Edited\n\nFirst draft about hedges.", mtime=1_700_000_000)
    vault.write("racy.md", "# Racy\n\nOriginal text about fences.", mtime=1_700_000_000)
    source = make_source(owner, vault)
    source_sync(source=source, embedder=embedder)
    edited_doc = Document.objects.get(source=source, path="edited.md")

    vault.write("edited.md", "# Edited\n\nSecond draft about hedges.", mtime=1_700_000_100)
    vault.write("brand-new.md", "# Brand new\n\nA note written during the sync.")
    vault.write("racy.md", "# Racy\n\nChanged once about fences.", mtime=1_700_000_100)
    real_read_bytes = pathlib.Path.read_bytes

    def flaky_read_bytes(self):
        if self.name in ("edited.md", "brand-new.md"):
            self.unlink()  # deleted between listing and reading
        if self.name == "racy.md":
            self.write_text("# Racy\n\nChanged twice about fences.", encoding="utf-8")
        return real_read_bytes(self)

    monkeypatch.setattr(pathlib.Path, "read_bytes", flaky_read_bytes)
    report = source_sync(source=source, embedder=embedder)
    monkeypatch.undo()

    assert report.seen == 4
    assert failed_paths(report) == {"edited.md", "brand-new.md"}
    assert "could not read" in reason_for(report, "brand-new.md")
    assert not Document.objects.filter(source=source, path="brand-new.md").exists()
    assert Document.objects.get(source=source, path="stays.md").status == Document.Status.READY

    converged = source_sync(source=source, embedder=embedder)

    assert converged.failed == []
    assert converged.removed == 1  # edited.md is gone for good
    assert not Document.objects.filter(pk=edited_doc.pk).exists()
    assert not Document.objects.filter(source=source, path="brand-new.md").exists()
    racy = Document.objects.get(source=source, path="racy.md")
    assert "Changed twice" in " ".join(racy.chunks.values_list("text", flat=True))
    assert set(Document.objects.filter(source=source).values_list("path", flat=True)) == {
        "stays.md",
        "racy.md",
    }
    assert_index_mirrors_chunks()
    before = total_changes()
    settled = source_sync(source=source, embedder=embedder)
    assert (settled.rows_written, settled.chunks_embedded, settled.failed) == (0, 0, [])
    assert total_changes() == before


# --- the source folder itself ---------------------------------------------------


def test_missing_source_folder_is_refused_naming_the_folder(owner, vault, make_source, embedder):
    vault.write("note.md", "# Note\n\nSomething.")
    source = make_source(owner, vault)
    shutil.rmtree(vault.root)

    with pytest.raises(SourceUnavailable) as caught:
        source_sync(source=source, embedder=embedder)

    assert source.root_path in str(caught.value)
    assert embedder.passages == 0


def test_source_path_that_is_a_file_is_refused_naming_it(owner, vault, make_source, embedder):
    source = make_source(owner, vault)
    shutil.rmtree(vault.root)
    vault.root.write_text("not a folder any more")

    with pytest.raises(SourceUnavailable) as caught:
        source_sync(source=source, embedder=embedder)

    assert source.root_path in str(caught.value)


def test_unreadable_source_folder_is_refused_naming_the_folder(
    owner, vault, make_source, embedder, monkeypatch
):
    vault.write("note.md", "# Note\n\nSomething.")
    source = make_source(owner, vault)
    source_sync(source=source, embedder=embedder)
    count = Document.objects.filter(source=source).count()
    # The suite may run as root, whom permission bits do not stop: the folder's
    # access check is what reports it unreadable.
    real_access = os.access

    def no_access(path, mode, *args, **kwargs):
        if os.fspath(path) == source.root_path:
            return False
        return real_access(path, mode, *args, **kwargs)

    monkeypatch.setattr(os, "access", no_access)

    with pytest.raises(SourceUnavailable) as caught:
        source_sync(source=source, embedder=embedder)

    assert source.root_path in str(caught.value)
    assert "readable" in str(caught.value)
    # An unreachable folder is not an empty one: nothing was removed.
    assert Document.objects.filter(source=source).count() == count


# --- the command ---------------------------------------------------------------------


def test_kb_sync_json_prints_exactly_the_report_fields(owner, vault, make_source):
    vault.write("garden.md", GARDEN)
    vault.write_bytes("broken.md", b"\x00\x01\x02 binary")
    make_source(owner, vault)
    out = io.StringIO()

    call_command("kb", "sync", "--json", stdout=out)

    data = json.loads(out.getvalue())
    assert list(data) == [
        "seen",
        "added",
        "updated",
        "unchanged",
        "removed",
        "failed",
        "chunks_embedded",
        "rows_written",
        "seconds",
    ]
    assert data["seen"] == 2
    assert data["added"] == 2
    assert data["chunks_embedded"] == 3
    assert [f["path"] for f in data["failed"]] == ["broken.md"]
    assert data["failed"][0]["reason"]
    assert isinstance(data["seconds"], float)
