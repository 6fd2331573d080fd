"""`manage.py kb`: the stable headless interface (names and JSON fields)."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from apps.library.models import Source
from tests.support.processes import manage

RESULT_FIELDS = {
    "rank", "score", "document_id", "title", "source_id", "source", "path", "duplicate_paths",
    "date", "date_source", "family", "is_latest", "superseded_by", "note", "section", "text",
    "legs", "page",
    "annotation", "sharing", "cloud", "similarity", "relevant",
}  # fmt: skip


def kb(*args) -> str:
    out = StringIO()
    call_command("kb", *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def notes(owner, vault):
    vault.write("career/plan_jun2026.md", "# Plan\n\n## Goal\nA frontend internship.\n")
    vault.write("career/plan_oct2026.md", "# Plan\n\n## Goal\nAn AI backend internship.\n")
    vault.write("private/health.md", "# Health\n\nPhysio on Tuesdays.\n")
    return vault


def test_sources_add_prints_the_id_and_list_shows_it(owner, notes):
    source_id = int(
        kb("sources", "add", "--owner", "olivia", "--name", "Notes", "--path", str(notes.root))
    )
    listing = json.loads(kb("sources", "list", "--json"))
    assert listing == [
        {
            "id": source_id,
            "name": "Notes",
            "owner": "olivia",
            "kind": "vault",
            "path": str(notes.root),
            "sharing": "owner",
            "cloud": "local-only",
        }
    ]


def test_sources_add_takes_sharing_groups_and_dirs(owner, notes):
    from django.contrib.auth.models import Group

    Group.objects.create(name="family")
    kb(
        "sources", "add", "--owner", "olivia", "--name", "N", "--path", str(notes.root),
        "--share-group", "family", "--cloud", "allowed", "--private-dir", "secret",
        "--unversioned-dir", "diary/2026", "--skip-dir", "archive",
    )  # fmt: skip
    source = Source.objects.get(name="N")
    assert source.sharing == "groups"
    assert list(source.shared_groups.values_list("name", flat=True)) == ["family"]
    assert source.cloud == "allowed"
    assert source.private_dirs == ["secret"]
    assert source.unversioned_dirs == ["diary/2026"]
    assert "archive" in source.skip_dirs


@pytest.mark.parametrize(
    "path,reason",
    [("/etc", "outside the vaults root"), ("missing-folder", "does not exist")],
)
def test_a_folder_outside_the_root_or_missing_is_refused(owner, vaults_root, path, reason):
    with pytest.raises(CommandError, match=reason):
        kb("sources", "add", "--owner", "olivia", "--name", "X", "--path", path)
    assert not Source.objects.exists()


def test_a_symlink_out_of_the_root_is_refused(owner, vaults_root, tmp_path):
    (vaults_root / "sneaky").symlink_to(tmp_path.parent)
    with pytest.raises(CommandError, match="outside the vaults root"):
        kb(
            "sources",
            "add",
            "--owner",
            "olivia",
            "--name",
            "X",
            "--path",
            str(vaults_root / "sneaky"),
        )


def test_an_unreadable_folder_is_refused(owner, vaults_root, monkeypatch):
    folder = vaults_root / "locked"
    folder.mkdir()
    monkeypatch.setattr("os.access", lambda path, mode: False)
    with pytest.raises(CommandError, match="not readable"):
        kb("sources", "add", "--owner", "olivia", "--name", "X", "--path", str(folder))


def test_sync_json_reports_every_field(owner, notes):
    kb("sources", "add", "--owner", "olivia", "--name", "Notes", "--path", str(notes.root))
    first = json.loads(kb("sync", "--json"))
    assert set(first) == {
        "seen", "added", "updated", "unchanged", "removed", "failed", "chunks_embedded",
        "rows_written", "seconds",
    }  # fmt: skip
    assert (first["seen"], first["added"], first["failed"]) == (3, 3, [])
    again = json.loads(kb("sync", "--owner", "olivia", "--json"))
    assert (again["unchanged"], again["chunks_embedded"], again["rows_written"]) == (3, 0, 0)


def test_search_json_has_the_documented_fields(owner, notes):
    kb("sources", "add", "--owner", "olivia", "--name", "Notes", "--path", str(notes.root))
    kb("sync")
    data = json.loads(
        kb("search", "--user", "olivia", "--json", "--limit", "3", "current career goal")
    )
    assert data["query"] == "current career goal"
    assert data["mode"] == "present"
    assert data["results"]
    assert set(data["results"][0]) == RESULT_FIELDS
    top = data["results"][0]
    assert top["path"] == "career/plan_oct2026.md"
    assert top["is_latest"] is True
    assert top["date"] == "2026-10-01"


def test_queries_file_prints_one_json_line_per_query_with_timing(owner, notes, tmp_path):
    kb("sources", "add", "--owner", "olivia", "--name", "Notes", "--path", str(notes.root))
    kb("sync")
    queries = tmp_path / "q.txt"
    queries.write_text("frontend internship\n\nphysio tuesdays\n")
    lines = [
        json.loads(line)
        for line in kb("search", "--user", "olivia", "--queries-file", str(queries)).splitlines()
    ]
    assert [line["query"] for line in lines] == ["frontend internship", "physio tuesdays"]
    assert all(line["elapsed_ms"] > 0 for line in lines)


def test_show_prints_chunks_in_order_and_hides_other_peoples_documents(owner, member, notes):
    kb("sources", "add", "--owner", "olivia", "--name", "Notes", "--path", str(notes.root))
    kb("sync")
    from apps.library.models import Document

    document = Document.objects.get(path="career/plan_oct2026.md")
    shown = kb("show", str(document.pk), "--user", "olivia")
    assert "An AI backend internship." in shown
    assert "latest" in shown and "2026-10-01" in shown
    with pytest.raises(CommandError, match="no document"):
        kb("show", str(document.pk), "--user", "max")


def test_stats_counts_documents(owner, notes):
    kb("sources", "add", "--owner", "olivia", "--name", "Notes", "--path", str(notes.root))
    kb("sync")
    assert "3 documents" in kb("stats", "--user", "olivia")


def test_add_puts_a_file_in_the_owners_uploads(owner, vaults_root):
    note = vaults_root / "recipe.md"
    note.write_text("# Lentil soup\n\nRed lentils, cumin, lemon.\n")
    out = kb("add", "--owner", "olivia", str(note))
    assert "Lentil soup" in out
    assert Source.objects.get(owner=owner, kind="uploads").documents.count() == 1
    assert note.read_text().startswith("# Lentil soup")  # the original is untouched


def test_add_refuses_an_unsupported_type(owner, vaults_root):
    image = vaults_root / "anim.gif"
    image.write_bytes(b"GIF89a\x01\x00\x01\x00\x80\x00\x00" + bytes(64))
    with pytest.raises(CommandError, match="looks like a GIF image"):
        kb("add", "--owner", "olivia", str(image))


@pytest.mark.django_db(transaction=True)
def test_search_with_fts_syntax_exits_cleanly_in_a_real_process(owner):
    result = manage("kb", "search", "--user", "olivia", '"unbalanced NEAR( -x: *star')
    assert result.returncode == 0, result.stderr
    assert "mode: lookup" in result.stdout
