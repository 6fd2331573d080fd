"""Consistent copies of the live database with SQLite's online backup API.

The backup API copies pages under SQLite's own locking, so it is safe while
the web process and the worker keep writing: the copy is the database as of
one moment, never a torn file (which `cp` of a WAL database can produce).
"""

from __future__ import annotations

import sqlite3  # the module settings put behind this name (sqlean where needed)
from pathlib import Path

from django.db import connection

from apps.core.errors import Refused


def integrity_check(path: Path) -> str:
    """'ok', or what is wrong with the database file at `path`."""
    try:
        target = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        return f"cannot open: {exc}"
    try:
        (result,) = target.execute("PRAGMA integrity_check").fetchone()
    except sqlite3.DatabaseError as exc:
        return str(exc)
    finally:
        target.close()
    return result


def backup_database(*, dest: Path, pages_per_step: int = 1024) -> Path:
    dest = dest.expanduser().resolve()
    if dest.is_dir():
        raise Refused(f"{dest} is a directory; give a file name such as {dest / 'jarvis.sqlite3'}")
    if dest.exists():
        raise Refused(f"{dest} already exists; Jarvis does not overwrite files")
    dest.parent.mkdir(parents=True, exist_ok=True)
    connection.ensure_connection()
    target = sqlite3.connect(str(dest))
    try:
        # Stepping lets writers in between steps instead of waiting for one long copy.
        connection.connection.backup(target, pages=pages_per_step)
        target.execute("PRAGMA journal_mode=DELETE")  # a self-contained single file
    finally:
        target.close()
    return dest


def restore_database(*, source: Path) -> None:
    """Replace the live database's contents with `source`, after checking it."""
    source = source.expanduser().resolve()
    if not source.is_file():
        raise Refused(f"{source} is not a file")
    result = integrity_check(source)
    if result != "ok":
        raise Refused(f"{source} failed PRAGMA integrity_check: {result}")
    connection.ensure_connection()
    origin = sqlite3.connect(str(source))
    try:
        origin.backup(connection.connection)
    finally:
        origin.close()
