"""Jarvis never changes a vault. A fingerprint of the whole tree (every
file's bytes, mode, size, mtime and ctime, every folder and link) is the same
before and after registering, syncing, `kb doctor --fix` (with something to
fix), `reindex`, `migrate` (which tightens Jarvis's own file modes) and
syncing again. ctime moves on any chmod, chown, utime or write, so this also
catches a change to a file's metadata alone."""

from __future__ import annotations

import hashlib
import os
import stat
from datetime import timedelta
from io import StringIO
from pathlib import Path

import pymupdf
import pytest
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from apps.library.index import tables
from apps.library.index.tables import FTS_TABLE
from apps.library.models import Document, IndexState

pytestmark = pytest.mark.django_db(transaction=True)

OLD = 1_600_000_000  # 2020-09-13: mtimes a sync must not bump


def fingerprint(root: Path) -> dict[str, tuple]:
    prints = {}
    for folder, subfolders, files in os.walk(root):
        for name in [*subfolders, *files]:
            path = Path(folder) / name
            info = path.lstat()
            kind = stat.S_IFMT(info.st_mode)
            if stat.S_ISLNK(info.st_mode):
                content = os.readlink(path)
            elif stat.S_ISREG(info.st_mode):
                content = hashlib.sha256(path.read_bytes()).hexdigest()
            else:
                content = ""
            prints[str(path.relative_to(root))] = (
                kind,
                stat.S_IMODE(info.st_mode),
                info.st_size if stat.S_ISREG(info.st_mode) else 0,
                info.st_mtime_ns,
                info.st_ctime_ns,
                info.st_uid,
                content,
            )
    return prints


def annotated_pdf() -> bytes:
    pdf = pymupdf.open()
    page = pdf.new_page()
    page.insert_text((72, 72), "The allotment rent is due in March.")
    page.add_highlight_annot(page.search_for("allotment rent", quads=True)).update()
    return pdf.tobytes()


@pytest.fixture
def generation_one_afterwards():
    """`reindex` moves the index to a new generation and drops the first one's
    tables; here that is committed (a transactional test), and the tests after
    this one expect generation 1. Put it back."""
    yield
    state = IndexState.objects.filter(pk=1).first()
    if state is not None and state.generation != 1:
        tables.create_generation_tables(1, state.code_bits)
        tables.drop_generation_tables(state.generation)
        IndexState.objects.filter(pk=1).update(generation=1)


@pytest.fixture
def household_vault(tmp_path, settings) -> Path:
    """A vault in the default layout ($DATA_DIR/vaults/olivia), with the kinds
    of files a real one has, world-readable as a sync tool leaves them."""
    data = tmp_path / "var"
    settings.DATA_DIR = data
    settings.UPLOADS_DIR = data / "uploads"
    settings.DRAFTS_ROOT = data / "drafts"
    settings.VAULTS_ROOT = data / "vaults"
    root = data / "vaults" / "olivia"
    files = {
        "plans/trip_jun2026.md": "---\ndate: 2026-06-01\ntags: [travel]\n---\n# Trip\n\nPorto.\n",
        "plans/trip_oct2026.md": "# Trip\n\nPorto by plane.\n",
        "jobs/acme.md": "---\ntype: job_application\nstatus: rejected\n---\n# Acme\n\nApplied.\n",
        "private/diary.md": "# Diary\n\nQuiet day.\n",
        "log/2026.md": "# 2026\n\n## 2026-03-01\nPlanted beans.\n\n## 2026-04-01\nWatered.\n",
        ".obsidian/app.json": '{"theme": "dark"}\n',
        "notes/empty.md": "",
        "notes/binary.bin": "\x00\x01not text\x02",
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (root / "papers").mkdir()
    (root / "papers" / "allotment.pdf").write_bytes(annotated_pdf())
    (root / "papers" / "broken.pdf").write_bytes(b"%PDF-1.7\n this is not a PDF at all")
    (root / "notes" / "link-to-trip.md").symlink_to(root / "plans" / "trip_oct2026.md")
    for folder, _subfolders, names in os.walk(root):
        os.chmod(folder, 0o755)  # noqa: S103 (as a sync tool leaves them)
        for name in names:
            path = Path(folder) / name
            if not path.is_symlink():
                os.chmod(path, 0o644)
                os.utime(path, (OLD, OLD))
    return root


def test_no_vault_file_changes_through_sync_doctor_fix_reindex_and_migrate(
    owner, household_vault, generation_one_afterwards
):
    before = fingerprint(household_vault)
    assert len(before) > 15
    out = StringIO()

    call_command("kb", "sources", "add", "--owner", "olivia", "--name", "Notes",
                 "--path", str(household_vault), "--private-dir", "private", stdout=out)  # fmt: skip
    call_command("kb", "sync", stdout=out)
    assert Document.objects.filter(status="ready").count() >= 6
    assert Document.objects.filter(path="papers/broken.pdf", status="failed").exists()

    # Give `kb doctor --fix` work that reads the vault: a document stuck mid-ingest
    # (it is ingested again from its file) and keyword rows gone missing.
    stuck = Document.objects.get(path="papers/allotment.pdf")
    Document.objects.filter(pk=stuck.pk).update(
        status="parsing", updated_at=timezone.now() - timedelta(hours=2)
    )
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {FTS_TABLE}")
    call_command("kb", "doctor", "--fix", stdout=out)
    assert "fixed:" in out.getvalue()
    stuck.refresh_from_db()
    assert stuck.status == "ready"

    call_command("reindex", stdout=out)
    call_command("migrate", "--noinput", verbosity=0)
    call_command("kb", "sync", stdout=out)
    call_command("kb", "doctor", stdout=out)

    assert fingerprint(household_vault) == before
