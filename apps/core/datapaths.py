"""Where Jarvis keeps its own files, and whether a path is one of them.

Its own: the data dir (database, queue, keys, uploads, fetched pages, drafts,
digests, the embedding model's files), the drafts folder and the database and
queue files wherever they are configured. A vaults root placed inside the data
dir (the default, `$DATA_DIR/vaults`) is the household's, not Jarvis's.
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings

SQLITE_SIDECARS = ("", "-wal", "-shm", "-journal")


def _inside(path: Path, root: Path) -> bool:
    return path == root or path.is_relative_to(root)


def private_trees() -> list[Path]:
    """The folders that are Jarvis's own, resolved, none inside another."""
    roots = [Path(settings.DATA_DIR).resolve(), Path(settings.DRAFTS_ROOT).resolve()]
    return [root for i, root in enumerate(roots) if not any(_inside(root, r) for r in roots[:i])]


def private_files() -> list[Path]:
    """The database and queue files (with SQLite's side files), resolved."""
    files = []
    for database in (Path(settings.DATABASE_FILE), Path(settings.HUEY_FILE)):
        database = database.resolve()
        files += [database.with_name(database.name + suffix) for suffix in SQLITE_SIDECARS]
    return files


def vaults_root() -> Path:
    return Path(settings.VAULTS_ROOT).resolve()


def is_jarvis_data(path: Path) -> bool:
    """Whether the resolved `path` is, or lies inside, Jarvis's own data. The
    vaults root counts as the household's only when it lies strictly below a
    folder of Jarvis's, so a vaults root set to the data dir itself does not
    make the keys readable as a "vault"."""
    if any(path == file for file in private_files()):
        return True
    vaults = vaults_root()
    for tree in private_trees():
        if _inside(path, tree):
            household = vaults != tree and _inside(vaults, tree) and _inside(path, vaults)
            if not household:
                return True
    return False


def holds_jarvis_data(folder: Path) -> bool:
    """Whether the resolved `folder` is Jarvis's data or has some of it below
    it (a vaults root set above the data dir, registered whole)."""
    owns = [*private_trees(), *private_files()]
    return is_jarvis_data(folder) or any(_inside(own, folder) for own in owns)
