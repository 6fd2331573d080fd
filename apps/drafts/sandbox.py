"""The drafts sandbox: the one containment policy for every read and write.

Every path into a draft is built by `resolve()` and nothing else. A draft is
`DRAFTS_ROOT/<owner id>/<key>/`; the key is random hex the code chose, the
filename comes from a person or a model and is checked before it touches a
path: no separators, no traversal, no leading dot (hidden files, `..`), no
leading `-` (the name is handed to latexmk and pandoc as an argument, where a
dash would make it an option), an extension from the allowlist. Then the
*resolved* path must still be `<root>/<owner>/<key>/<name>` exactly, which
defeats a symlink planted anywhere along the way, and a symlink at the name
itself is refused outright. Reads and writes open with O_NOFOLLOW as well, so
a link swapped in after the check is not followed either.

This module deletes exactly one thing: a whole draft folder, named by owner
id and key (`remove_folder`), for a person's delete and the retention sweep.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import shutil
import stat
from pathlib import Path

from django.conf import settings

from apps.core.errors import Refused

KEY_PATTERN = re.compile(r"^[0-9a-f]{16}$")
NAME_MAX = 120
_FORBIDDEN_CHARS = re.compile(r"[/\\\x00-\x1f\x7f]")


def new_key() -> str:
    return secrets.token_hex(8)


def file_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def check_filename(name: object) -> str:
    """`name` if a draft may hold a file of that name; Refused with the reason otherwise."""
    if not isinstance(name, str) or not name:
        raise Refused("A file needs a name, like notes.md.")
    if len(name) > NAME_MAX:
        raise Refused(f"A file name can be at most {NAME_MAX} characters.")
    if _FORBIDDEN_CHARS.search(name):
        raise Refused("A file name cannot contain '/', '\\' or control characters.")
    if name != name.strip():
        raise Refused("A file name cannot start or end with a space.")
    if name.startswith("."):
        raise Refused("A file name cannot start with a dot.")
    if name.startswith("-"):
        raise Refused("A file name cannot start with '-'.")
    suffix = Path(name).suffix.lower()
    allowed = tuple(ext.lower() for ext in settings.DRAFTS_EXTENSIONS)
    if suffix not in allowed:
        raise Refused(f"Drafts can hold {', '.join(allowed)} files, not “{suffix or name}”.")
    return name


def _root() -> Path:
    return Path(settings.DRAFTS_ROOT).resolve()


def _check_key(key: object) -> str:
    if not isinstance(key, str) or not KEY_PATTERN.match(key):
        raise Refused("That is not a draft.")
    return key


def folder(owner_id: int, key: str) -> Path:
    """The draft's folder path (not created, not resolved)."""
    return _root() / str(int(owner_id)) / _check_key(key)


def resolve(owner_id: int, key: str, filename: object) -> Path:
    """The path of `filename` inside the draft, after every containment check."""
    name = check_filename(filename)
    candidate = folder(owner_id, key) / name
    try:
        inside = candidate.resolve().relative_to(_root()).parts
    except ValueError:
        inside = ()
    if inside != (str(int(owner_id)), key, name) or candidate.is_symlink():
        raise Refused(f"“{name}” points outside its draft and cannot be used.")
    return candidate


def create_folder(owner_id: int, key: str) -> Path:
    path = folder(owner_id, key)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    if path.parent.is_symlink() or path.parent.resolve() != _root() / str(int(owner_id)):
        raise Refused("The drafts folder is not where it should be.")
    path.mkdir(mode=0o700)  # a new random key: an existing folder is an error
    return path


def exists(owner_id: int, key: str, filename: str) -> bool:
    try:
        return stat.S_ISREG(os.lstat(resolve(owner_id, key, filename)).st_mode)
    except FileNotFoundError:
        return False


def read_text(owner_id: int, key: str, filename: str) -> str:
    path = resolve(owner_id, key, filename)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        raise Refused(f"There is no file “{filename}” in this draft.") from None
    except OSError as exc:  # ELOOP: a symlink swapped in after the check
        raise Refused(f"“{filename}” cannot be read: {exc.strerror}.") from None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise Refused(f"“{filename}” is not a regular file.")
        data = handle.read(settings.DRAFTS_MAX_FILE_BYTES + 1)
    if len(data) > settings.DRAFTS_MAX_FILE_BYTES:
        raise Refused(f"“{filename}” is larger than the {_limit()} limit.")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise Refused(f"“{filename}” is not UTF-8 text.") from None


def write_text(owner_id: int, key: str, filename: str, text: str) -> None:
    """Replace the file atomically: a crash leaves the old text or the new, never half."""
    path = resolve(owner_id, key, filename)
    data = text.encode("utf-8")
    if len(data) > settings.DRAFTS_MAX_FILE_BYTES:
        raise Refused(f"“{filename}” would be larger than the {_limit()} limit.")
    temp = path.with_name(f".{secrets.token_hex(6)}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)  # replaces a planted symlink itself, never its target
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def list_files(owner_id: int, key: str) -> list[str]:
    """The draft's files a person can open (regular files with allowed names), by name."""
    names = []
    try:
        entries = list(os.scandir(folder(owner_id, key)))
    except FileNotFoundError:
        return []
    for entry in entries:
        try:
            check_filename(entry.name)
        except Refused:
            continue
        if entry.is_file(follow_symlinks=False):
            names.append(entry.name)
    return sorted(names, key=str.lower)


def remove_folder(owner_id: int, key: str) -> bool:
    """Delete one whole draft folder; False if it was already gone."""
    path = folder(owner_id, key)
    if not path.exists() and not path.is_symlink():
        return False
    if path.is_symlink() or path.resolve().relative_to(_root()).parts != (
        str(int(owner_id)),
        key,
    ):
        raise Refused("That draft folder is not inside the drafts area; nothing was removed.")
    shutil.rmtree(path)
    return True


def _limit() -> str:
    return f"{settings.DRAFTS_MAX_FILE_BYTES / 1_000_000:g} MB"


# --- Built PDFs: kept beside the drafts, never inside one (a compile copies
# the draft folder, and must not pick up its own earlier output).

BUILDS = ".builds"
BUILD_KINDS = ("compile", "export")


def build_path(owner_id: int, key: str, filename: str, kind: str) -> Path:
    check_filename(filename)
    if kind not in BUILD_KINDS:
        raise Refused("Unknown kind of output.")
    folder(owner_id, key)  # validates the key
    return _root() / BUILDS / str(int(owner_id)) / key / f"{kind}-{filename}.pdf"


def write_build(owner_id: int, key: str, filename: str, kind: str, pdf: bytes) -> Path:
    path = build_path(owner_id, key, filename, kind)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    temp = path.with_name(f".{secrets.token_hex(6)}.tmp")
    temp.write_bytes(pdf)
    os.replace(temp, path)
    return path


def remove_builds(owner_id: int, key: str) -> None:
    path = _root() / BUILDS / str(int(owner_id)) / _check_key(key)
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
