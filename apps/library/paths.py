"""Folders inside a collection: whether a relative path lies under one of them.

One rule for private, unversioned and skipped folders alike, used by the folder
walk, the version rules and the selectors. Pure: no Django, no files.
"""

from __future__ import annotations

from pathlib import PurePosixPath


def under(rel: str, folders: list[str]) -> bool:
    """Is `rel` inside one of `folders` (paths relative to the source root, any depth)?
    "." (or "/", which is stored as ".") is the source's root: everything is under it."""
    parts = PurePosixPath(rel).parts
    for folder in folders:
        prefix = PurePosixPath(folder.strip("/")).parts
        if not prefix:
            # "." meant "the whole collection"; reading it as "no folder" made a
            # private setting that protects nothing (it failed open).
            return True
        if parts[: len(prefix)] == prefix and len(parts) > len(prefix):
            return True
    return False
