"""One sync per source at a time, across processes (apps.core.locks), and a
`kb add` killed half-way is taken up again the next time the file is added."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from apps.core.locks import process_lock
from apps.core.models import JobRun
from apps.library.ingest.sync import SourceBusy, source_sync
from apps.library.models import Document
from apps.library.services.adding import upload_add
from apps.library.services.queue import cli_ingest_lock, documents_to_recover
from apps.library.tasks import sources_sync
from tests.support.processes import ROOT, child_env, manage, wait_until

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def notes(owner, vault, make_source):
    for n in range(12):
        vault.write(f"notes/note-{n:02}.md", f"# Note {n}\n\nThe plum tree number {n} flowered.\n")
    return make_source(owner, vault)


def test_two_kb_syncs_at_once_index_every_file_once_with_no_failures(notes, vaults_root):
    env = child_env(JARVIS_VAULTS_ROOT=str(vaults_root))
    argv = [sys.executable, str(ROOT / "manage.py"), "kb", "sync", "--source", str(notes.pk)]
    runs = [
        subprocess.Popen(argv, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(2)
    ]
    outputs = [(run.communicate(timeout=300), run.returncode) for run in runs]
    for (stdout, stderr), code in outputs:
        assert b"Traceback" not in stderr
        assert b"UNIQUE" not in stdout + stderr
        # Either it waited for the other and found nothing left to do, or it
        # said the source is busy and did nothing.
        assert code == 0 or b"already syncing" in stderr, stderr
    assert notes.documents.filter(status=Document.Status.READY).count() == 12
    assert notes.files.count() == 12


def test_a_kb_sync_while_another_process_syncs_says_so_and_writes_nothing(notes, vaults_root):
    with process_lock(f"sync-{notes.pk}"):  # the worker's sync, say
        result = manage(
            "kb", "sync", "--source", str(notes.pk), JARVIS_VAULTS_ROOT=str(vaults_root)
        )
    assert result.returncode == 1
    assert "already syncing" in result.stderr and "Traceback" not in result.stderr
    assert not notes.documents.exists()
    # Once the other one is done, a sync goes ahead.
    result = manage("kb", "sync", "--source", str(notes.pk), JARVIS_VAULTS_ROOT=str(vaults_root))
    assert result.returncode == 0, result.stderr
    assert notes.documents.count() == 12


def test_the_workers_sync_skips_a_source_being_synced_without_failing(notes, embedder):
    with process_lock(f"sync-{notes.pk}"):
        with pytest.raises(SourceBusy):
            source_sync(source=notes, embedder=embedder, wait=0)
        sources_sync()  # the periodic job, run inline here
    run = JobRun.objects.get(job="sources_sync")
    assert run.outcome == JobRun.Outcome.OK
    assert "already syncing elsewhere, skipped" in run.summary
    assert not notes.documents.exists()


def test_a_killed_kb_add_is_indexed_when_the_file_is_added_again(owner, vaults_root):
    path = vaults_root / "plums.md"
    path.write_text("# Plums\n\nThe plum tree by the shed is a Victoria.\n" * 50)
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "manage.py"), "kb", "add", "--owner", "olivia", str(path)],
        env=child_env(JARVIS_VAULTS_ROOT=str(vaults_root)),
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    stuck = wait_until(
        lambda: Document.objects.filter(status=Document.Status.PARSING).first(),
        timeout=120,
        interval=0.02,
        process=process,
    )
    process.send_signal(signal.SIGKILL)
    process.wait()
    stuck.refresh_from_db()
    assert stuck.status == Document.Status.PARSING  # what the kill leaves behind

    result = manage(
        "kb", "add", "--owner", "olivia", str(path), JARVIS_VAULTS_ROOT=str(vaults_root)
    )
    assert result.returncode == 0, result.stderr
    stuck.refresh_from_db()
    assert stuck.status == Document.Status.READY
    assert f"{stuck.pk}  " in result.stdout and "ready" in result.stdout
    assert Document.objects.count() == 1


def test_a_document_another_kb_add_is_indexing_is_left_to_it(owner, vaults_root):
    path = vaults_root / "plums.md"
    path.write_text("# Plums\n\nThe plum tree by the shed is a Victoria.\n")
    added = upload_add(owner=owner, name=path.name, data=path.read_bytes())
    Document.objects.filter(pk=added.document.pk).update(status=Document.Status.PARSING)
    with cli_ingest_lock(added.document):  # a live `kb add` of the same file
        result = manage(
            "kb", "add", "--owner", "olivia", str(path), JARVIS_VAULTS_ROOT=str(vaults_root)
        )
        requeue, failed = documents_to_recover()  # nor does a starting worker take it
    assert result.returncode == 0, result.stderr
    assert "parsing" in result.stdout
    assert added.document not in requeue and failed == 0
    added.document.refresh_from_db()
    assert added.document.status == Document.Status.PARSING and added.document.parser_crashes == 0
