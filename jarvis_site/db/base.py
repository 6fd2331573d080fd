"""Django's sqlite3 backend, with sqlite-vec loaded and the pragmas Jarvis needs.

Three processes (web, worker, CLI) write one SQLite file, so every connection
gets WAL (readers never block the writer), a generous busy timeout, and
`synchronous=NORMAL` (safe with WAL; fsync at checkpoints only). Transactions
start as IMMEDIATE (set in settings) so a read-then-write transaction takes the
write lock up front instead of failing with "database is locked" when it tries
to upgrade.

Closed connections are kept for reuse (`IdleConnections`). Under daphne every
request runs its sync parts in a thread of its own, and Django closes that
thread's connection when the request ends; opening one (the file, Django's
SQL functions, sqlite-vec, the pragmas) cost about 6 ms, several times the
queries of a chat send. A connection goes back only when it is idle: not
inside a transaction, foreign keys on. It is keyed by process and by the
database file's identity, so a recreated test database or a forked worker
never gets another's connection.
"""

from __future__ import annotations

import os
import threading

from django.db.backends.sqlite3 import base, creation

from apps.core.sqlite_ext import load_sqlite_vec, require_fts5

BUSY_TIMEOUT_MS = 10_000

# Reads through a memory map skip the pager's copy into its cache: the vector
# index is scanned on every search, and this makes that scan a third faster.
MMAP_BYTES = 256 * 1024 * 1024

PRAGMAS = (
    "PRAGMA journal_mode=WAL",
    "PRAGMA synchronous=NORMAL",
    f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}",
    "PRAGMA foreign_keys=ON",
    f"PRAGMA mmap_size={MMAP_BYTES}",
)


class IdleConnections:
    """Open SQLite connections nobody uses, by (process, database file)."""

    KEEP = 8  # per database file: a few more than the threads that query at once

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.idle: dict[tuple, list] = {}

    def take(self, key: tuple):
        with self.lock:
            waiting = self.idle.get(key)
            return waiting.pop() if waiting else None

    def give(self, key: tuple, connection) -> bool:
        with self.lock:
            waiting = self.idle.setdefault(key, [])
            if len(waiting) >= self.KEEP:
                return False
            waiting.append(connection)
            return True

    def clear(self) -> None:
        with self.lock:
            idle, self.idle = self.idle, {}
        for connections in idle.values():
            for connection in connections:
                connection.close()


IDLE = IdleConnections()


def _file_key(name) -> tuple | None:
    """Which database file `name` is now (None: not a plain file, not pooled)."""
    name = str(name)
    if not name or name == ":memory:" or name.startswith("file:") or "mode=memory" in name:
        return None
    try:
        stat = os.stat(name)
    except OSError:
        return None
    return (os.getpid(), os.path.abspath(name), stat.st_dev, stat.st_ino)


class DatabaseCreation(creation.DatabaseCreation):
    """Test databases are deleted and made again at the same path, and a new
    file may get the old one's inode: no idle connection survives that."""

    def _create_test_db(self, *args, **kwargs):
        IDLE.clear()
        return super()._create_test_db(*args, **kwargs)

    def _clone_test_db(self, *args, **kwargs):
        IDLE.clear()
        return super()._clone_test_db(*args, **kwargs)

    def _destroy_test_db(self, *args, **kwargs):
        IDLE.clear()
        return super()._destroy_test_db(*args, **kwargs)


class DatabaseWrapper(base.DatabaseWrapper):
    creation_class = DatabaseCreation
    pool_key: tuple | None = None

    def get_new_connection(self, conn_params):
        self.pool_key = _file_key(conn_params.get("database", ""))
        if self.pool_key is not None and (reused := IDLE.take(self.pool_key)) is not None:
            return reused
        connection = super().get_new_connection(conn_params)
        load_sqlite_vec(connection)
        require_fts5(connection)
        for pragma in PRAGMAS:
            connection.execute(pragma)
        return connection

    def _close(self):
        connection = self.connection
        if (
            connection is not None
            and self.pool_key is not None
            and not self.in_atomic_block
            and _idle(connection)
            and IDLE.give(self.pool_key, connection)
        ):
            return None
        return super()._close()


def _idle(connection) -> bool:
    """Whether a connection can serve someone else as if it were new."""
    try:
        if connection.in_transaction:
            return False
        (foreign_keys,) = connection.execute("PRAGMA foreign_keys").fetchone()
    except Exception:  # a connection that cannot answer this is closed, not kept
        return False
    return foreign_keys == 1
