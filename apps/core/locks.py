"""Locks shared by Jarvis's processes (web, worker, CLI): a file under the data dir.

An advisory `flock` on `$JARVIS_DATA_DIR/locks/<name>.lock`. The kernel drops
it when the process holding it exits, however it exits, so a killed sync
never leaves a lock behind (a row in SQLite would need someone to clear it,
and a write transaction held for a whole sync would block every other writer).
"""

from __future__ import annotations

import fcntl
import os
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings

POLL_SECONDS = 0.2
_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")


class Busy(Exception):
    """Another process holds the lock (after waiting `wait` seconds)."""


def lock_path(name: str) -> Path:
    if not _NAME.match(name):
        raise ValueError(f"not a lock name: {name!r}")
    return Path(settings.DATA_DIR) / "locks" / f"{name}.lock"


@contextmanager
def process_lock(name: str, *, wait: float = 0.0) -> Iterator[None]:
    """Hold the lock `name` for the block; raise Busy if another process (or
    another holder in this one) keeps it for longer than `wait` seconds."""
    path = lock_path(name)
    path.parent.mkdir(mode=0o700, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise Busy(name) from None
                time.sleep(POLL_SECONDS)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        # Each holder opens its own descriptor, so two threads of one process
        # exclude each other too (flock locks belong to the open file).
        os.close(fd)


def is_held(name: str) -> bool:
    """Whether some holder keeps the lock `name` at this moment."""
    try:
        with process_lock(name):
            return False
    except Busy:
        return True
