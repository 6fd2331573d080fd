"""`manage.py backup` writes a consistent copy, even while others write;
a restored backup passes PRAGMA integrity_check and holds the data."""

import sqlite3
import threading

import pytest
from django.core.management import CommandError, call_command
from django.db import connection, connections

from apps.core.backup import integrity_check
from apps.core.models import JobRun
from tests.support.processes import manage

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_backup_taken_during_writes_restores_cleanly(tmp_path):
    JobRun.objects.create(job="before-backup", summary="kept")
    stop = threading.Event()

    def keep_writing():
        try:
            while not stop.is_set():
                JobRun.objects.create(job="during-backup")
        finally:
            connections.close_all()

    writer = threading.Thread(target=keep_writing)
    writer.start()
    try:
        result = manage("backup", str(tmp_path / "copy.sqlite3"))
    finally:
        stop.set()
        writer.join()
    assert result.returncode == 0, result.stderr
    assert "integrity ok" in result.stdout

    copy = tmp_path / "copy.sqlite3"
    assert integrity_check(copy) == "ok"

    # Restore it over the live database and read it back through Django.
    JobRun.objects.all().delete()
    call_command("restore", str(copy), "--yes")
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA integrity_check")
        assert cursor.fetchone()[0] == "ok"
    assert JobRun.objects.get(job="before-backup").summary == "kept"


def test_backup_never_overwrites_an_existing_file(tmp_path):
    existing = tmp_path / "precious.sqlite3"
    existing.write_text("not a database, but mine")
    with pytest.raises(CommandError, match="already exists"):
        call_command("backup", str(existing))
    assert existing.read_text() == "not a database, but mine"


def test_restore_refuses_a_corrupt_file_and_keeps_the_database(tmp_path):
    JobRun.objects.create(job="live")
    corrupt = tmp_path / "corrupt.sqlite3"
    good = sqlite3.connect(corrupt)
    good.execute("CREATE TABLE t(x)")
    good.executemany("INSERT INTO t VALUES (?)", [("x" * 500,)] * 200)
    good.commit()
    good.close()
    data = bytearray(corrupt.read_bytes())
    data[4096:8192] = b"\xff" * 4096  # smash the second page
    corrupt.write_bytes(bytes(data))
    with pytest.raises(CommandError):
        call_command("restore", str(corrupt), "--yes")
    assert JobRun.objects.filter(job="live").exists()


def test_restore_needs_confirmation(tmp_path):
    with pytest.raises(CommandError, match="--yes"):
        call_command("restore", str(tmp_path / "x.sqlite3"))
