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

from apps.core.datapaths import private_files, private_trees, vaults_root

logger = logging.getLogger(__name__)

OPEN_BITS = 0o077  # group and others


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
    os.chmod(path, mode & ~OPEN_BITS)  # a regular file or folder, checked just above
    return True


def data_modes_fix() -> int:
    """Make everything Jarvis keeps private to its account. Returns how many
    files and folders were changed."""
    vaults = vaults_root()
    changed = 0
    for root in private_trees():
        if root == vaults:
            # Vaults and Jarvis's files mixed in one folder: which is whose cannot
            # be told, so only the database and queue files below are tightened.
            logger.warning("JARVIS_VAULTS_ROOT is %s itself; its files are left as they are", root)
            continue
        for folder, subfolders, files in os.walk(root, followlinks=False):
            here = Path(folder)
            subfolders[:] = [name for name in subfolders if here / name != vaults]
            changed += _tighten(here)
            changed += sum(_tighten(here / name) for name in files)
    changed += sum(_tighten(path) for path in private_files())
    if changed:
        logger.info("made %d files and folders private to this account (0600/0700)", changed)
    return changed
