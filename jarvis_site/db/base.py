"""Django's sqlite3 backend, with sqlite-vec loaded and the pragmas Jarvis needs.

Three processes (web, worker, CLI) write one SQLite file, so every connection
gets WAL (readers never block the writer), a generous busy timeout, and
`synchronous=NORMAL` (safe with WAL; fsync at checkpoints only). Transactions
start as IMMEDIATE (set in settings) so a read-then-write transaction takes the
write lock up front instead of failing with "database is locked" when it tries
to upgrade.
"""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured
from django.db.backends.sqlite3 import base

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


def load_sqlite_vec(connection) -> None:
    try:
        import sqlite_vec
    except ImportError as exc:
        raise ImproperlyConfigured(
            "sqlite-vec is not installed: install it with `pip install sqlite-vec` "
            "(Jarvis stores its embeddings in sqlite-vec tables)."
        ) from exc
    try:
        connection.enable_load_extension(True)
        sqlite_vec.load(connection)
        connection.enable_load_extension(False)
    except AttributeError as exc:
        raise ImproperlyConfigured(
            "This sqlite3 module cannot load extensions: install `sqlean.py` "
            "(`pip install sqlean.py`); Jarvis switches to it automatically."
        ) from exc
    except Exception as exc:
        raise ImproperlyConfigured(
            f"sqlite-vec could not be loaded ({exc}): reinstall it with "
            "`pip install --force-reinstall sqlite-vec`."
        ) from exc


def require_fts5(connection) -> None:
    (has_fts5,) = connection.execute("SELECT sqlite_compileoption_used('ENABLE_FTS5')").fetchone()
    if not has_fts5:
        raise ImproperlyConfigured(
            "This SQLite library was built without FTS5, which Jarvis's keyword search needs: "
            "install `sqlean.py` (`pip install sqlean.py`), whose SQLite includes it."
        )


class DatabaseWrapper(base.DatabaseWrapper):
    def get_new_connection(self, conn_params):
        connection = super().get_new_connection(conn_params)
        load_sqlite_vec(connection)
        require_fts5(connection)
        for pragma in PRAGMAS:
            connection.execute(pragma)
        return connection
