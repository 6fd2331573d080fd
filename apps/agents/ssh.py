"""The SSH layer: the only module that calls asyncssh.

Everything here is async and knows nothing of Django: callers pass a `Target`
(where to connect and with which secret, already decrypted) and get plain
results or an `apps.agents.errors.SSHError` whose message can be shown as is.

asyncssh's defaults are wrong for a server process that many people share,
and every one of them is overridden on every connection (`_client_options`):
- `known_hosts` is built from the profile's pinned key only. Unset it would read
  the service account's ~/.ssh/known_hosts; None would turn checking off.
- `client_keys` is the profile's key or None. Unset (or an empty list) loads
  whatever keys sit in ~/.ssh.
- `config=[]`: unset loads ~/.ssh/config, where a ProxyCommand or a HostName
  could send the connection somewhere else.
- `agent_path=None`, `agent_identities=None`: unset uses $SSH_AUTH_SOCK.
- no agent or X11 forwarding, no GSSAPI, no host-based auth, no PKCS#11, no
  X.509 trust store from ~/.ssh.

A host that is not pinned yet is only asked for its key (`capture_host_key`
runs the key exchange and stops): no user name worth the name and no credential
is sent to a server nobody has accepted.
"""

from __future__ import annotations

import asyncio
import logging
import posixpath
import secrets
import socket
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

import asyncssh

from apps.agents.errors import (
    AuthRefused,
    CommandTimeout,
    ConnectionFailed,
    HostKeyChanged,
    HostKeyUnknown,
    HostUnreachable,
    InvalidKey,
    RemoteFileError,
    SSHError,
)

logger = logging.getLogger(__name__)

Connection = asyncssh.SSHClientConnection

CONNECT_TIMEOUT = 10.0  # TCP connect + handshake + login, all together
LOGIN_TIMEOUT = 20.0
KEEPALIVE_INTERVAL = 15.0
KEEPALIVE_COUNT_MAX = 3  # about 45 s of silence and the connection is given up
COMMAND_TIMEOUT = 120.0
MAX_OUTPUT = 64 * 1024  # bytes kept per stream (half from the start, half from the end)
MAX_READ = 1024 * 1024
MAX_ENTRIES = 1000
BACKUP_SUFFIX = ".jarvis-bak"
_CHUNK = 64 * 1024
# What a host-key capture calls itself: it never authenticates, but asyncssh
# may get as far as naming a user before the connection is dropped.
_PROBE_USER = "jarvis-hostkey-probe"


@dataclass(frozen=True)
class Target:
    """Where to connect and as whom. Secrets are left out of the repr."""

    host: str
    port: int
    username: str
    private_key: str | None = field(default=None, repr=False)  # OpenSSH/PEM text
    password: str | None = field(default=None, repr=False)
    host_key: str | None = None  # the pinned OpenSSH public-key line


@dataclass(frozen=True)
class HostKey:
    line: str  # "ssh-ed25519 AAAA…", no comment
    fingerprint: str  # "SHA256:…"


@dataclass(frozen=True)
class KeyPair:
    private_key: str = field(repr=False)  # OpenSSH format, no passphrase
    public_key: str  # the authorized_keys line


@dataclass(frozen=True)
class CommandResult:
    exit_code: int | None  # None when the process died of a signal or was killed
    signal: str | None  # e.g. "KILL"
    stdout: str  # decoded with replacement; a cut is marked in the text
    stderr: str
    stdout_bytes: int  # how much the command printed in all
    stderr_bytes: int
    stdout_cut: int  # how many of those bytes are not in `stdout`
    stderr_cut: int


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


# --- keys


def _import_private_key(text: str) -> asyncssh.SSHKey:
    try:
        return asyncssh.import_private_key(text)
    except asyncssh.KeyImportError as exc:
        # asyncssh's message never quotes the key; ours neither.
        if "assphrase" in str(exc):
            raise InvalidKey(
                "the private key is protected by a passphrase; Jarvis needs it without "
                "one (ssh-keygen -p -N '' -f COPY_OF_KEY removes it from a copy)"
            ) from None
        raise InvalidKey(
            "this is not a private key Jarvis can read (OpenSSH or PEM format)"
        ) from None


def _public_line(key: asyncssh.SSHKey) -> str:
    return key.export_public_key("openssh").decode("ascii").strip()


def public_key_of(private_key: str) -> str:
    """The authorized_keys line of a private key; InvalidKey if it cannot be read."""
    return _public_line(_import_private_key(private_key))


def generate_keypair(comment: str = "jarvis") -> KeyPair:
    """A new ed25519 key pair."""
    key = asyncssh.generate_private_key("ssh-ed25519", comment=comment)
    return KeyPair(
        private_key=key.export_private_key("openssh").decode("ascii"),
        public_key=_public_line(key),
    )


def _host_key(key: asyncssh.SSHKey) -> HostKey:
    key.set_comment(None)
    return HostKey(line=_public_line(key), fingerprint=key.get_fingerprint("sha256"))


def parse_host_key(line: str) -> HostKey:
    """A host key line ("ssh-ed25519 AAAA… [comment]") in canonical form."""
    try:
        key = asyncssh.import_public_key(line.strip())
    except (asyncssh.KeyImportError, ValueError):
        raise InvalidKey("this is not an OpenSSH public key line") from None
    return _host_key(key)


# --- connecting


def _client_options(
    target: Target,
    *,
    capture: bool = False,
    connect_timeout: float = CONNECT_TIMEOUT,
    login_timeout: float = LOGIN_TIMEOUT,
    keepalive_interval: float = KEEPALIVE_INTERVAL,
    client_factory: Callable[[], asyncssh.SSHClient] | None = None,
) -> asyncssh.SSHClientConnectionOptions:
    """The one place connection settings are decided (see the module docstring).
    `capture`: options for fetching the host key, which carry no credential."""
    if capture:
        known_hosts = None  # get_server_host_key sets it anyway: it only reads the key
        client_keys = None
        password = None
        username = _PROBE_USER
    else:
        if not target.host_key:
            raise ValueError("connect needs a pinned host key")
        known_hosts = ([asyncssh.import_public_key(target.host_key)], [], [])
        client_keys = [_import_private_key(target.private_key)] if target.private_key else None
        password = target.password or None
        username = target.username
    return asyncssh.SSHClientConnectionOptions(
        config=[],
        known_hosts=known_hosts,
        client_keys=client_keys,
        password=password,
        username=username,
        passphrase=None,
        ignore_encrypted=False,
        agent_path=None,
        agent_identities=None,
        agent_forwarding=False,
        x11_forwarding=False,
        pkcs11_provider=None,
        x509_trusted_certs=None,
        x509_trusted_cert_paths=[],
        host_based_auth=False,
        client_host_keysign=False,
        gss_host=None,
        gss_kex=False,
        gss_auth=False,
        public_key_auth=bool(client_keys),
        password_auth=bool(password),
        kbdint_auth=bool(password),  # servers that only ask for it interactively
        host_key_alias=None,
        proxy_command=None,
        tunnel=None,
        send_env=None,
        env=None,
        request_pty=False,
        connect_timeout=connect_timeout,
        login_timeout=login_timeout,
        keepalive_interval=keepalive_interval,
        keepalive_count_max=KEEPALIVE_COUNT_MAX,
        client_factory=client_factory,
    )


def _connect_error(exc: BaseException, target: Target, timeout: float) -> SSHError:
    where = f"{target.host}:{target.port}"
    if isinstance(exc, TimeoutError):
        return HostUnreachable(f"{where} did not answer within {timeout:g} s")
    if isinstance(exc, socket.gaierror):
        return HostUnreachable(f"cannot find the host {target.host!r}: {exc.strerror}")
    if isinstance(exc, ConnectionRefusedError):
        return HostUnreachable(f"{where} refused the connection (is an SSH server running?)")
    if isinstance(exc, ConnectionResetError | ConnectionAbortedError | BrokenPipeError):
        # Reached, then dropped: OpenSSH hangs up like this when the key
        # exchange finds nothing in common. Not "unreachable".
        return ConnectionFailed(f"{where} closed the connection ({exc.strerror or exc})")
    if isinstance(exc, OSError):
        return HostUnreachable(f"cannot reach {where}: {exc.strerror or exc}")
    if isinstance(exc, asyncssh.PermissionDenied):
        what = "key" if target.private_key else "password"
        return AuthRefused(f"{where} refused {target.username!r} with the profile's {what}")
    if isinstance(exc, asyncssh.ConnectionLost):
        return ConnectionFailed(f"the connection to {where} was lost: {exc.reason}")
    if isinstance(exc, asyncssh.DisconnectError):
        return ConnectionFailed(f"{where} ended the connection: {exc.reason}")
    return ConnectionFailed(f"cannot connect to {where}: {exc}")


_CONNECT_ERRORS = (OSError, TimeoutError, asyncssh.Error)


async def capture_host_key(
    target: Target,
    *,
    connect_timeout: float = CONNECT_TIMEOUT,
    algorithms: list[str] | None = None,
) -> HostKey:
    """The server's host key, from a key exchange that stops before any login.
    `algorithms` limits which key types the server may present."""
    options = _client_options(target, capture=True, connect_timeout=connect_timeout)
    try:
        key = await asyncssh.get_server_host_key(
            target.host,
            target.port,
            config=[],
            options=options,
            server_host_key_algs=algorithms or (),
        )
    except _CONNECT_ERRORS as exc:
        raise _connect_error(exc, target, connect_timeout) from None
    if key is None:
        raise ConnectionFailed(f"{target.host}:{target.port} presented no host key")
    return _host_key(key)


async def _replaced_key(target: Target, pinned: asyncssh.SSHKey, timeout: float) -> str | None:
    """After a failed handshake: the fingerprint of the key the server has now
    when the pinned one is gone, else None. The connection offered only the
    pinned key's type, so a server that lost that type ends the key exchange
    (OpenSSH simply hangs up) rather than showing another key."""
    expected = pinned.get_fingerprint("sha256")
    same_type = [alg.decode("ascii") for alg in pinned.sig_algorithms]
    try:
        current = await capture_host_key(target, connect_timeout=timeout, algorithms=same_type)
    except HostUnreachable:
        return None  # down, not changed
    except SSHError:
        try:  # no key of the pinned type any more: which key does it have?
            current = await capture_host_key(target, connect_timeout=timeout)
        except SSHError:
            return None
    return current.fingerprint if current.fingerprint != expected else None


async def connect(
    target: Target,
    *,
    connect_timeout: float = CONNECT_TIMEOUT,
    login_timeout: float = LOGIN_TIMEOUT,
    keepalive_interval: float = KEEPALIVE_INTERVAL,
) -> Connection:
    """An authenticated connection (use `async with await connect(t) as conn:`).

    Without a pinned key: HostKeyUnknown carrying the server's fingerprint and
    key line, nothing sent. A key other than the pinned one: HostKeyChanged.
    Also HostUnreachable, AuthRefused, ConnectionFailed."""
    if not target.host_key:
        key = await capture_host_key(target, connect_timeout=connect_timeout)
        raise HostKeyUnknown(
            host=target.host, port=target.port, fingerprint=key.fingerprint, key_line=key.line
        )
    pinned = parse_host_key(target.host_key)
    pinned_key = asyncssh.import_public_key(pinned.line)
    offered: list[asyncssh.SSHKey] = []

    class _PinnedClient(asyncssh.SSHClient):
        # Asked only for a key that is not the pinned one: note it for the
        # message and refuse.
        def validate_host_public_key(self, host, addr, port, key) -> bool:
            offered.append(key)
            return False

    options = _client_options(
        target,
        connect_timeout=connect_timeout,
        login_timeout=login_timeout,
        keepalive_interval=keepalive_interval,
        client_factory=_PinnedClient,
    )

    def changed(got: str | None) -> HostKeyChanged:
        return HostKeyChanged(
            host=target.host, port=target.port, expected=pinned.fingerprint, got=got
        )

    try:
        return await asyncssh.connect(target.host, target.port, config=[], options=options)
    except asyncssh.HostKeyNotVerifiable:
        raise changed(offered[0].get_fingerprint("sha256") if offered else None) from None
    except asyncssh.PermissionDenied as exc:
        raise _connect_error(exc, target, connect_timeout) from None
    except (
        asyncssh.KeyExchangeFailed,
        asyncssh.ConnectionLost,
        asyncssh.DisconnectError,
        ConnectionResetError,
    ) as exc:
        got = await _replaced_key(target, pinned_key, connect_timeout)
        if got is not None:
            raise changed(got) from None
        raise _connect_error(exc, target, connect_timeout) from None
    except _CONNECT_ERRORS as exc:
        raise _connect_error(exc, target, connect_timeout) from None


# --- commands

# The SSH exec request carries one string that the remote login shell parses;
# there is no argv form. So that string is fixed code plus quoted literals:
# the runner script below gets the directory and the command as positional
# arguments ($1, $2) and never splices either into code. The command then
# runs in a fresh bash (sh where there is no bash): people and models write
# bash, and `source`, `[[ ]]` and pipefail should work.
_RUNNER = (
    'if [ -n "$1" ]; then cd -- "$1" || exit 126; fi; '
    'if command -v bash >/dev/null 2>&1; then exec bash -c "$2"; fi; '
    'exec sh -c "$2"'
)


def quote(text: str) -> str:
    """Quote for the remote login shell: sh, bash, dash, zsh, ksh and fish.
    Single quotes, with ' and \\ written outside them (fish reads \\ inside
    single quotes; POSIX shells do not, and "\\\\" means \\ to both)."""
    if "\0" in text:
        raise ValueError("a shell argument cannot contain a NUL byte")
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError("a shell argument must be valid Unicode text") from None
    return "'" + text.replace("'", "'\"'\"'").replace("\\", "'\"\\\\\"'") + "'"


def command_line(command: str, cwd: str | None = None) -> str:
    """The exec request for `command` run in `cwd` (None: the login directory)."""
    return f"exec /bin/sh -c {quote(_RUNNER)} jarvis {quote(cwd or '')} {quote(command)}"


class _Capped:
    """Keeps the first and the last `limit // 2` bytes of a stream, counts the rest."""

    def __init__(self, limit: int) -> None:
        self.head_limit = limit - limit // 2
        self.tail_limit = limit // 2
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data and self.tail_limit:
            self.tail += data
            if len(self.tail) > 2 * self.tail_limit:  # trim now and then, not per chunk
                del self.tail[: -self.tail_limit]

    def result(self) -> tuple[str, int]:
        tail = bytes(self.tail[-self.tail_limit :]) if self.tail_limit else b""
        cut = self.total - len(self.head) - len(tail)
        head_text = bytes(self.head).decode("utf-8", errors="replace")
        if not cut:
            return head_text + tail.decode("utf-8", errors="replace"), 0
        note = f"\n[… {cut:,} bytes cut: the output was {self.total:,} bytes …]\n"
        return head_text + note + tail.decode("utf-8", errors="replace"), cut


def _command_result(
    process: asyncssh.SSHClientProcess, out: _Capped, err: _Capped
) -> CommandResult:
    stdout, stdout_cut = out.result()
    stderr, stderr_cut = err.result()
    exit_signal = process.exit_signal
    return CommandResult(
        exit_code=None if exit_signal else process.exit_status,
        signal=exit_signal[0] if exit_signal else None,
        stdout=stdout,
        stderr=stderr,
        stdout_bytes=out.total,
        stderr_bytes=err.total,
        stdout_cut=stdout_cut,
        stderr_cut=stderr_cut,
    )


async def _pump(reader: asyncssh.SSHReader, sink: _Capped) -> None:
    while chunk := await reader.read(_CHUNK):
        sink.add(chunk)


async def _kill(process: asyncssh.SSHClientProcess) -> None:
    # OpenSSH delivers a signal request with killpg() on the session's process
    # group, so the shell and what it started go together; closing the channel
    # alone would leave a `sleep` running.
    try:
        process.send_signal("KILL")
    except (OSError, asyncssh.Error):
        logger.warning("could not send KILL to a timed-out remote command", exc_info=True)
    process.close()
    try:
        await asyncio.wait_for(process.wait_closed(), timeout=5)
    except TimeoutError:
        logger.warning("a killed remote command's channel did not close within 5 s")


async def run_command(
    conn: Connection,
    command: str,
    *,
    cwd: str | None = None,
    timeout: float = COMMAND_TIMEOUT,
    max_output: int = MAX_OUTPUT,
) -> CommandResult:
    """Run `command` in a fresh shell in `cwd`, stdin closed. Output past
    `max_output` bytes per stream is counted and dropped as it arrives (a
    50 MB output costs no more memory than a short one). Past `timeout` the
    remote process group is killed and CommandTimeout carries what it printed."""
    try:
        line = command_line(command, cwd)
    except ValueError as exc:
        raise SSHError(str(exc)) from None
    out, err = _Capped(max_output), _Capped(max_output)
    try:
        process = await conn.create_process(line, encoding=None, request_pty=False)
    except (OSError, asyncssh.Error) as exc:
        raise ConnectionFailed(f"could not start the command: {exc}") from None
    try:
        process.stdin.write_eof()
        async with asyncio.timeout(timeout):
            await asyncio.gather(_pump(process.stdout, out), _pump(process.stderr, err))
            await process.wait_closed()
    except TimeoutError:
        await _kill(process)
        raise CommandTimeout(timeout=timeout, partial=_command_result(process, out, err)) from None
    except (OSError, asyncssh.Error) as exc:
        process.close()
        raise ConnectionFailed(f"the connection broke while the command ran: {exc}") from None
    return _command_result(process, out, err)


# --- files over SFTP: a path is a path, never a shell string


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
        raise RemoteFileError(f"cannot write {path}: not a regular file", path=path, reason=reason)
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
