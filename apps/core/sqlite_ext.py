"""Loading sqlite-vec and checking for FTS5 on a raw SQLite connection.

The database backend (`jarvis_site.db.base`) runs these on every connection it
opens, and `kb doctor` on the read-only connection it probes with; here so that
both take them from the floor below them.
"""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured


def load_sqlite_vec(connection) -> None:
    try:
        import sqlite_vec  # here, so a missing package reads as the message below
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
