"""What can go wrong talking to a remote machine, in words a person understands.

Every message here is safe to show: it names the host, the port, the user or
a path, never a key, a password or anything decrypted. Callers show `str(exc)`.
These classes import nothing from asyncssh, so views, services and the chat
loop can catch them without touching the SSH layer.
"""

from __future__ import annotations

from dataclasses import dataclass

from apps.core.errors import JarvisError


# What a finished command gave back. It lives here, beside the errors, because
# CommandTimeout carries the partial result: keeping both in one module is
# what keeps this module free of the SSH layer (no import circle).
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


class SSHError(JarvisError):
    """Base for every failure of the SSH layer."""


class InvalidKey(SSHError):
    """A pasted private key or a host key line that cannot be used."""


class HostKeyUnknown(SSHError):
    """No host key is pinned yet: the server's key was captured (key exchange
    only, no user name or credential sent) and waits for the person to accept it."""

    def __init__(self, *, host: str, port: int, fingerprint: str, key_line: str) -> None:
        self.host, self.port = host, port
        self.fingerprint, self.key_line = fingerprint, key_line
        super().__init__(
            f"{host}:{port} is not trusted yet. Its host key fingerprint is {fingerprint}. "
            "Compare it with the server's own (ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub "
            "on the server) and accept it if they match."
        )


class HostKeyChanged(SSHError):
    """The server offered a key other than the pinned one."""

    def __init__(self, *, host: str, port: int, expected: str, got: str | None) -> None:
        self.host, self.port, self.expected, self.got = host, port, expected, got
        offered = got or "a key of another type"
        super().__init__(
            f"host key changed: expected {expected}, got {offered} from {host}:{port}. "
            "Someone may be intercepting the connection; nothing was sent. If the server "
            "was reinstalled, forget the pinned key and accept the new one."
        )


class HostUnreachable(SSHError):
    """No SSH server answered at host:port (refused, no route, name unknown, silent)."""


class AuthRefused(SSHError):
    """The server refused the profile's user name and key or password."""


class ConnectionFailed(SSHError):
    """The connection broke or the server ended it for another reason."""


class CommandTimeout(SSHError):
    """A command ran past its timeout and was killed; `partial` holds what it printed."""

    def __init__(self, *, timeout: float, partial: CommandResult) -> None:
        self.timeout, self.partial = timeout, partial
        super().__init__(f"the command ran longer than {timeout:g} s and was stopped")


class RemoteFileError(SSHError):
    """An SFTP operation failed. `reason` is one of: not_found, permission_denied,
    no_space, is_directory, not_a_file, failure."""

    def __init__(self, message: str, *, path: str, reason: str) -> None:
        self.path, self.reason = path, reason
        super().__init__(message)
