"""Listing the files of a folder source: what is indexed and what is skipped."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from apps.library.formats import synced_kind


@dataclass(frozen=True)
class FileInfo:
    rel: str  # posix path relative to the source root
    absolute: Path
    size: int
    mtime_ns: int
    kind: str


def is_skipped_dir(name: str, skip_dirs: list[str]) -> bool:
    # Hidden folders (.obsidian, .trash, .git) and anything named skip* stay out,
    # whatever else the owner lists.
    lowered = name.lower()
    return name.startswith(".") or lowered.startswith("skip") or name in skip_dirs


WHOLE_SOURCE = "."


def walk_source(root: Path, skip_dirs: list[str]) -> Iterator[FileInfo]:
    """Every supported file under `root`, at any depth, in a stable order.
    Symlinks that lead outside the root are not followed."""
    root = root.resolve()
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not is_skipped_dir(d, skip_dirs))
        for name in sorted(filenames):
            kind = synced_kind(name)
            if name.startswith(".") or kind is None:
                continue
            absolute = Path(dirpath) / name
            try:
                if absolute.is_symlink() and not absolute.resolve().is_relative_to(root):
                    continue
                stat = absolute.stat()
            except OSError:
                continue  # vanished between listing and stat: the next sync sees it
            yield FileInfo(
                rel=absolute.relative_to(root).as_posix(),
                absolute=absolute,
                size=stat.st_size,
                mtime_ns=stat.st_mtime_ns,
                kind=kind,
            )
