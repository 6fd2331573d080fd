"""Files over SFTP: a path is a path, never a shell string."""

from __future__ import annotations

import logging
import posixpath
import secrets
import stat
from dataclasses import dataclass
from datetime import UTC, datetime

import asyncssh

from apps.agents.errors import ConnectionFailed, RemoteFileError
from apps.agents.ssh.connection import Connection

logger = logging.getLogger(__name__)

MAX_READ = 1024 * 1024
MAX_ENTRIES = 1000
BACKUP_SUFFIX = ".jarvis-bak"


@dataclass(frozen=True)
class RemoteFile:
    path: str
    size: int
    data: bytes  # at most the max_bytes asked for
    truncated: bool

    @property
    def text(self) -> str:
        return self.data.decode("utf-8", errors="replace")

    @property
    def is_binary(self) -> bool:
        # The heuristic git and grep use: text files do not contain NUL.
        return b"\0" in self.data[:8192]


@dataclass(frozen=True)
class WriteResult:
    path: str
    size: int
    created: bool  # there was no file before
    backup_path: str | None
    atomic: bool  # False when the server allowed only an in-place rewrite


@dataclass(frozen=True)
class RemoteEntry:
    name: str
    kind: str  # "file", "dir", "link" or "other"
    size: int | None
    modified: datetime | None


@dataclass(frozen=True)
class Listing:
    path: str
    entries: list[RemoteEntry]
    truncated: bool  # more than max_entries; the first ones by name are kept


def _check_path(path: str) -> str:
    if not path or "\0" in path:
        raise RemoteFileError(
            "a path cannot be empty or contain a NUL byte", path=path, reason="failure"
        )
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        raise RemoteFileError(
            "a path must be valid Unicode text", path=path, reason="failure"
        ) from None
    return path


def _file_error(exc: asyncssh.SFTPError, path: str, doing: str) -> RemoteFileError:
    reason, text = {
        asyncssh.FX_NO_SUCH_FILE: ("not_found", "no such file or directory"),
        asyncssh.FX_NO_SUCH_PATH: ("not_found", "no such file or directory"),
        asyncssh.FX_PERMISSION_DENIED: ("permission_denied", "permission denied"),
        asyncssh.FX_WRITE_PROTECT: ("permission_denied", "the file system is read-only"),
        asyncssh.FX_NO_SPACE_ON_FILESYSTEM: ("no_space", "the remote disk is full"),
        asyncssh.FX_QUOTA_EXCEEDED: ("no_space", "the remote disk quota is exceeded"),
        asyncssh.FX_FILE_IS_A_DIRECTORY: ("is_directory", "it is a directory"),
        asyncssh.FX_NOT_A_DIRECTORY: ("not_found", "a part of the path is not a directory"),
    }.get(exc.code, ("failure", ""))
    if not text:
        # OpenSSH's sftp-server speaks version 3, which has no code for a full
        # disk: ENOSPC, EDQUOT and most else arrive as FX_FAILURE, from
        # OpenSSH with the bare word "Failure", from others with strerror.
        said = exc.reason or "Failure"
        if "no space" in said.lower() or "quota" in said.lower():
            reason, text = "no_space", f"the remote disk is full ({said})"
        elif said.lower() == "failure" and doing == "write":
            text = 'the server gave no reason ("Failure"); a full disk or quota is the usual cause'
        else:
            text = f"the server said {said!r}"
    return RemoteFileError(f"cannot {doing} {path}: {text}", path=path, reason=reason)


def _kind(attrs: asyncssh.SFTPAttrs) -> str:
    if attrs.permissions is not None:
        mode = attrs.permissions
        if stat.S_ISDIR(mode):
            return "dir"
        if stat.S_ISREG(mode):
            return "file"
        if stat.S_ISLNK(mode):
            return "link"
        return "other"
    return {
        asyncssh.FILEXFER_TYPE_DIRECTORY: "dir",
        asyncssh.FILEXFER_TYPE_REGULAR: "file",
        asyncssh.FILEXFER_TYPE_SYMLINK: "link",
    }.get(attrs.type, "other")


async def file_read(conn: Connection, path: str, *, max_bytes: int = MAX_READ) -> RemoteFile:
    """The first `max_bytes` of a regular file (symlinks followed)."""
    _check_path(path)
    try:
        async with conn.start_sftp_client() as sftp:
            attrs = await sftp.stat(path)
            kind = _kind(attrs)
            if kind == "dir":
                raise RemoteFileError(
                    f"cannot read {path}: it is a directory", path=path, reason="is_directory"
                )
            if kind != "file":
                # A FIFO or a device would block or never end.
                raise RemoteFileError(
                    f"cannot read {path}: not a regular file", path=path, reason="not_a_file"
                )
            async with sftp.open(path, "rb") as handle:
                data = await handle.read(max_bytes)
    except asyncssh.SFTPError as exc:
        raise _file_error(exc, path, "read") from None
    except (OSError, asyncssh.Error) as exc:
        raise ConnectionFailed(f"SFTP failed while reading {path}: {exc}") from None
    size = attrs.size if attrs.size is not None else len(data)
    return RemoteFile(path=path, size=size, data=data, truncated=size > len(data))


async def _put(
    sftp: asyncssh.SFTPClient, path: str, data: bytes, mode: str, perms: int | None
) -> None:
    attrs = asyncssh.SFTPAttrs(permissions=perms) if perms is not None else asyncssh.SFTPAttrs()
    async with sftp.open(path, mode, attrs) as handle:
        await handle.write(data)


async def file_write(
    conn: Connection, path: str, content: str | bytes, *, keep_backup: bool = False
) -> WriteResult:
    """Replace (or create) a file. The new bytes go to a temporary file beside
    it that is then renamed over it (posix-rename: readers see the old or the
    new file, never half of one). Where the directory is not writable but the
    file is, the file is rewritten in place instead (`atomic=False`).
    `keep_backup` first saves the old bytes as `<path>.jarvis-bak`. A symlink is
    followed: the file it points to is replaced, the link stays."""
    _check_path(path)
    data = content.encode("utf-8") if isinstance(content, str) else content
    try:
        async with conn.start_sftp_client() as sftp:
            return await _write(sftp, path, data, keep_backup)
    except asyncssh.SFTPError as exc:
        raise _file_error(exc, path, "write") from None
    except (OSError, asyncssh.Error) as exc:
        raise ConnectionFailed(f"SFTP failed while writing {path}: {exc}") from None


async def _write(
    sftp: asyncssh.SFTPClient, path: str, data: bytes, keep_backup: bool
) -> WriteResult:
    try:
        old = await sftp.lstat(path)
    except asyncssh.SFTPNoSuchFile:
        old = None
    if old is not None and _kind(old) == "link":
        path = await sftp.realpath(path)
        try:
            old = await sftp.stat(path)
        except asyncssh.SFTPNoSuchFile:
            old = None  # a dangling link: create what it points to
    if old is not None and _kind(old) != "file":
        reason = "is_directory" if _kind(old) == "dir" else "not_a_file"
        said = "it is a directory" if reason == "is_directory" else "not a regular file"
        raise RemoteFileError(f"cannot write {path}: {said}", path=path, reason=reason)
    perms = stat.S_IMODE(old.permissions) if old is not None and old.permissions else None

    backup = None
    if keep_backup and old is not None:
        async with sftp.open(path, "rb") as handle:
            previous = await handle.read()
        backup = path + BACKUP_SUFFIX
        try:
            await _put(sftp, backup, previous, "wb", perms)
        except asyncssh.SFTPError as exc:
            raise _file_error(exc, backup, "write") from None

    folder, name = posixpath.split(path)
    temp = posixpath.join(folder, f".{name}.jarvis-{secrets.token_hex(4)}.tmp")
    try:
        await _put(sftp, temp, data, "xb", perms)
    except asyncssh.SFTPPermissionDenied:
        if old is None:
            raise
        # The directory refuses new files but the file itself may be writable.
        await _put(sftp, path, data, "wb", None)
        return WriteResult(
            path=path, size=len(data), created=False, backup_path=backup, atomic=False
        )
    except asyncssh.SFTPError:
        await _discard(sftp, temp)
        raise
    try:
        await sftp.posix_rename(temp, path)
    except asyncssh.SFTPOpUnsupported:
        # A server without posix-rename (not OpenSSH): plain SFTP rename refuses
        # to replace an existing file, so an existing one goes away first.
        if old is not None:
            await sftp.remove(path)
        await sftp.rename(temp, path)
    except asyncssh.SFTPError:
        await _discard(sftp, temp)
        raise
    return WriteResult(
        path=path, size=len(data), created=old is None, backup_path=backup, atomic=True
    )


async def _discard(sftp: asyncssh.SFTPClient, temp: str) -> None:
    try:
        await sftp.remove(temp)
    except asyncssh.SFTPError:
        logger.warning("could not remove the temporary file %s", temp)


async def file_list(conn: Connection, path: str, *, max_entries: int = MAX_ENTRIES) -> Listing:
    """A directory's entries (not recursive), directories first, then by name."""
    _check_path(path)
    try:
        async with conn.start_sftp_client() as sftp:
            names = await sftp.readdir(path)
    except asyncssh.SFTPError as exc:
        raise _file_error(exc, path, "list") from None
    except (OSError, asyncssh.Error) as exc:
        raise ConnectionFailed(f"SFTP failed while listing {path}: {exc}") from None
    entries = []
    for item in names:
        name = (
            item.filename
            if isinstance(item.filename, str)
            else item.filename.decode(errors="replace")
        )
        if name in (".", ".."):
            continue
        attrs = item.attrs
        entries.append(
            RemoteEntry(
                name=name,
                kind=_kind(attrs),
                size=attrs.size,
                modified=datetime.fromtimestamp(attrs.mtime, UTC) if attrs.mtime else None,
            )
        )
    entries.sort(key=lambda e: (e.kind != "dir", e.name))
    return Listing(path=path, entries=entries[:max_entries], truncated=len(entries) > max_entries)
