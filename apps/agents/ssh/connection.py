"""Connecting: the one place asyncssh's connection settings are decided."""

from __future__ import annotations

import socket
from collections.abc import Callable
from dataclasses import dataclass, field

import asyncssh

from apps.agents.errors import (
    AuthRefused,
    ConnectionFailed,
    HostKeyChanged,
    HostKeyUnknown,
    HostUnreachable,
    SSHError,
)
from apps.agents.ssh.keys import HostKey, host_key_of, load_private_key, parse_host_key

Connection = asyncssh.SSHClientConnection

CONNECT_TIMEOUT = 10.0  # TCP connect + handshake + login, all together
LOGIN_TIMEOUT = 20.0
KEEPALIVE_INTERVAL = 15.0
KEEPALIVE_COUNT_MAX = 3  # about 45 s of silence and the connection is given up
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


def client_options(
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
        client_keys = [load_private_key(target.private_key)] if target.private_key else None
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
    options = client_options(target, capture=True, connect_timeout=connect_timeout)
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
    return host_key_of(key)


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

    options = client_options(
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
