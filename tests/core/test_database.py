"""The SQLite backend: sqlite-vec and FTS5 on every connection, WAL and the
pragmas three writing processes need, and a clear message when a piece is missing."""

import struct

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.db import connection

from jarvis_site.db import base as backend


def floats(values):
    return struct.pack(f"{len(values)}f", *values)


def test_a_vec0_table_is_created_and_queried_through_djangos_connection(db):
    with connection.cursor() as cursor:
        cursor.execute("CREATE VIRTUAL TABLE temp.probe_vec USING vec0(embedding float[3])")
        for rowid, vector in [(1, [1, 0, 0]), (2, [0, 1, 0]), (3, [0.9, 0.1, 0])]:
            cursor.execute(
                "INSERT INTO temp.probe_vec(rowid, embedding) VALUES (%s, %s)",
                [rowid, floats(vector)],
            )
        cursor.execute(
            "SELECT rowid FROM temp.probe_vec WHERE embedding MATCH %s AND k = 2 ORDER BY distance",
            [floats([1, 0, 0])],
        )
        assert [row[0] for row in cursor.fetchall()] == [1, 3]


def test_an_fts5_table_is_created_and_ranked_by_bm25(db):
    with connection.cursor() as cursor:
        cursor.execute("CREATE VIRTUAL TABLE temp.probe_fts USING fts5(body)")
        cursor.executemany(
            "INSERT INTO temp.probe_fts(rowid, body) VALUES (%s, %s)",
            [(1, "tax return due in april"), (2, "garden notes"), (3, "tax tax tax")],
        )
        cursor.execute(
            "SELECT rowid FROM temp.probe_fts WHERE probe_fts MATCH %s ORDER BY bm25(probe_fts)",
            ["tax"],
        )
        assert [row[0] for row in cursor.fetchall()] == [3, 1]


def test_every_connection_gets_the_pragmas(db):
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA journal_mode")
        assert cursor.fetchone()[0] == "wal"
        cursor.execute("PRAGMA busy_timeout")
        assert cursor.fetchone()[0] >= 5000
        cursor.execute("PRAGMA synchronous")
        assert cursor.fetchone()[0] == 1  # NORMAL
        cursor.execute("PRAGMA foreign_keys")
        assert cursor.fetchone()[0] == 1


def test_transactions_start_immediate():
    assert connection.settings_dict["OPTIONS"]["transaction_mode"] == "IMMEDIATE"


def test_a_missing_sqlite_vec_stops_startup_saying_what_to_install(monkeypatch):
    import sqlite_vec

    def broken(conn):
        raise OSError("cannot open shared object file")

    monkeypatch.setattr(sqlite_vec, "load", broken)
    wrapper = backend.DatabaseWrapper(
        {**connection.settings_dict, "NAME": ":memory:"}, alias="probe"
    )
    with pytest.raises(ImproperlyConfigured, match="pip install --force-reinstall sqlite-vec"):
        wrapper.get_new_connection(wrapper.get_connection_params())


def test_a_sqlite_without_fts5_stops_startup_saying_what_to_install():
    class NoFts5:
        def execute(self, sql):
            class Row:
                def fetchone(self):
                    return (0,)

            return Row()

    with pytest.raises(ImproperlyConfigured, match=r"sqlean\.py"):
        backend.require_fts5(NoFts5())


def test_the_extension_capable_sqlite_is_in_use():
    import sqlite3

    assert hasattr(sqlite3.Connection, "enable_load_extension")


def _fresh_wrapper():
    from django.db import connections

    return connections.create_connection("default")


def test_a_closed_connection_is_kept_and_serves_the_next_one_in_any_thread(db):
    import threading

    first = _fresh_wrapper()
    first.ensure_connection()
    raw = first.connection
    first.close()
    reused = {}

    def other_thread():
        wrapper = _fresh_wrapper()
        wrapper.ensure_connection()
        reused["raw"] = wrapper.connection
        with wrapper.cursor() as cursor:  # and it works there, pragmas and all
            cursor.execute("PRAGMA journal_mode")
            reused["mode"] = cursor.fetchone()[0]
        wrapper.close()

    thread = threading.Thread(target=other_thread)
    thread.start()
    thread.join()
    assert reused == {"raw": raw, "mode": "wal"}


def test_a_connection_closed_inside_a_transaction_is_not_kept(db):
    wrapper = _fresh_wrapper()
    wrapper.ensure_connection()
    raw = wrapper.connection
    raw.execute("BEGIN")
    wrapper.close()
    with pytest.raises(Exception, match="closed"):
        raw.execute("SELECT 1")
    other = _fresh_wrapper()
    other.ensure_connection()
    assert other.connection is not raw
    other.close()


def test_a_connection_with_foreign_keys_off_is_not_kept(db):
    wrapper = _fresh_wrapper()
    wrapper.ensure_connection()
    raw = wrapper.connection
    raw.execute("PRAGMA foreign_keys = OFF")
    wrapper.close()
    other = _fresh_wrapper()
    other.ensure_connection()
    assert other.connection is not raw
    with other.cursor() as cursor:
        cursor.execute("PRAGMA foreign_keys")
        assert cursor.fetchone()[0] == 1
    other.close()
