"""Jarvis's files are readable by the account it runs as, and nobody else.

The database, the queue, the keys, uploads, fetched pages, drafts and digests
hold the household's private notes and secrets. Every process sets umask 077
(jarvis_site.settings), so what Jarvis creates is 0600 (folders 0700); an
install from before that is put right by `manage.py migrate` (a post_migrate
hook, apps.core.apps), which `make run`, deploy/install.sh and update.sh run.

The vaults root is never touched, even inside the data dir: a person's vault
belongs to them (and whatever syncs it), not to Jarvis.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

from django.conf import settings

logger = logging.getLogger(__name__)

UMASK = 0o077
OPEN_BITS = 0o077  # group and others
SQLITE_SIDECARS = ("", "-wal", "-shm", "-journal")


def _inside(path: Path, root: Path) -> bool:
    return path == root or path.is_relative_to(root)


def _tighten(path: Path) -> bool:
    """Drop group and other permissions from a regular file or folder (never
    through a symlink). Returns whether anything changed."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return False
    if not (stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)):
        return False
    mode = stat.S_IMODE(info.st_mode)
    if not mode & OPEN_BITS:
        return False
    os.chmod(path, mode & ~OPEN_BITS, follow_symlinks=False)
    return True


def private_trees() -> list[Path]:
    roots = [Path(settings.DATA_DIR), Path(settings.DRAFTS_ROOT)]
    return [root for i, root in enumerate(roots) if not any(_inside(root, r) for r in roots[:i])]


def private_files() -> list[Path]:
    files = []
    for database in (Path(settings.DATABASE_FILE), Path(settings.HUEY_FILE)):
        files += [database.with_name(database.name + suffix) for suffix in SQLITE_SIDECARS]
    return files


def data_modes_fix() -> int:
    """Make everything Jarvis keeps private to its account. Returns how many
    files and folders were changed."""
    vaults = Path(settings.VAULTS_ROOT).resolve()
    changed = 0
    for root in private_trees():
        root = root.resolve()
        if _inside(root, vaults):
            continue
        for folder, subfolders, files in os.walk(root, followlinks=False):
            here = Path(folder)
            subfolders[:] = [name for name in subfolders if not _inside(here / name, vaults)]
            changed += _tighten(here)
            changed += sum(_tighten(here / name) for name in files)
    changed += sum(_tighten(path) for path in private_files())
    if changed:
        logger.info("made %d files and folders private to this account (0600/0700)", changed)
    return changed
