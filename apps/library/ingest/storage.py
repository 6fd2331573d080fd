"""Jarvis's own copies of uploaded files, fetched pages and downloaded papers,
and reading any document's original bytes.

Copies are content-addressed under the data dir (`<area>/<owner>/<hash>/<name>`),
so the same bytes are stored once. Folder documents are read from their source
folder, through one containment check: the resolved path must lie inside the
source root (a symlink planted in a vault cannot lead elsewhere). Nothing here
deletes anything.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import re
import unicodedata
from pathlib import Path, PurePosixPath

from django.conf import settings
from django.db import transaction

from apps.core.errors import Refused
from apps.library.models import Document

logger = logging.getLogger(__name__)

AREAS = ("uploads", "web", "papers")
MAX_NAME = 120


def area_root(area: str) -> Path:
    if area == "uploads":
        return Path(settings.UPLOADS_DIR)
    if area in AREAS:
        return Path(settings.DATA_DIR) / area
    raise ValueError(f"unknown storage area {area!r}")


def safe_filename(name: str, *, fallback: str = "file") -> str:
    """A file name safe to store and to show: no folders, no control characters,
    no leading dot or dash, bounded length; the extension is kept."""
    name = unicodedata.normalize("NFC", PurePosixPath(name.replace("\\", "/")).name)
    name = re.sub(r"[\x00-\x1f\x7f/\\:*?\"<>|]+", "_", name).strip().lstrip(".-").strip()
    if not name:
        return fallback
    stem, dot, suffix = name.rpartition(".")
    if dot and 0 < len(suffix) <= 10:
        return f"{stem[: MAX_NAME - len(suffix) - 1]}.{suffix}" if stem else f"{fallback}.{suffix}"
    return name[:MAX_NAME]


def store(*, area: str, owner_id: int, data: bytes, filename: str) -> str:
    """Write `data` into the area's folder; returns "<area>/<owner>/<hash>/<name>"."""
    digest = hashlib.sha256(data).hexdigest()[:16]
    inside = PurePosixPath(str(int(owner_id)), digest, safe_filename(filename))
    target = area_root(area) / inside
    relative = PurePosixPath(area) / inside
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f".{target.name}.partial")
        partial.write_bytes(data)
        partial.replace(target)  # never a half-written copy under the real name
    return relative.as_posix()


def original_release(relative: str) -> bool:
    """Delete Jarvis's copy at `relative` ("<area>/<owner>/<hash>/<name>") and
    its folder if that is left empty, unless a document still refers to it.
    The check and the rename out of the way happen under the database's write
    lock, so a document created at the same moment either holds it back or
    finds it gone (and `store` writes it again). Returns whether it went."""
    area, _, inside = relative.partition("/")
    if area not in AREAS or not inside:
        return False
    root = area_root(area).resolve()
    target = root / inside
    if target.is_symlink() or not target.resolve().is_relative_to(root):
        return False
    doomed = target.with_name(f".{target.name}.removed")
    with transaction.atomic():
        if Document.objects.filter(original=relative).exists():
            return False
        try:
            target.rename(doomed)
        except FileNotFoundError:
            return False
    doomed.unlink(missing_ok=True)
    with contextlib.suppress(OSError):  # not empty: another name with the same bytes
        target.parent.rmdir()
    logger.info("removed the stored copy %s", relative)
    return True


def original_path(document: Document) -> Path:
    """Where the document's original bytes are. Raises Refused if the path
    would leave its folder (a symlink, a crafted path)."""
    if document.original:
        area, _, inside = document.original.partition("/")
        root = area_root(area).resolve()
        candidate = (root / inside).resolve()
    else:
        root = Path(document.source.root_path).resolve()
        candidate = (root / document.path).resolve()
    if not candidate.is_relative_to(root):
        raise Refused("the original file is outside its folder")
    return candidate


def read_original(document: Document) -> bytes:
    try:
        return original_path(document).read_bytes()
    except FileNotFoundError:
        raise Refused("the original file is no longer there") from None
