"""The SSH layer: the only package that calls asyncssh.

Everything here is async and knows nothing of Django: callers pass a `Target`
(where to connect and with which secret, already decrypted) and get plain
results or an `apps.agents.errors.SSHError` whose message can be shown as is.

asyncssh's defaults are wrong for a server process that many people share,
and every one of them is overridden on every connection (`connection.client_options`):
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

from apps.agents.ssh.commands import (
    COMMAND_TIMEOUT,
    MAX_OUTPUT,
    CommandResult,
    command_line,
    quote,
    run_command,
)
from apps.agents.ssh.connection import (
    CONNECT_TIMEOUT,
    KEEPALIVE_INTERVAL,
    LOGIN_TIMEOUT,
    Connection,
    Target,
    capture_host_key,
    client_options,
    connect,
)
from apps.agents.ssh.files import (
    BACKUP_SUFFIX,
    MAX_ENTRIES,
    MAX_READ,
    Listing,
    RemoteEntry,
    RemoteFile,
    WriteResult,
    file_list,
    file_read,
    file_write,
)
from apps.agents.ssh.keys import HostKey, KeyPair, generate_keypair, parse_host_key, public_key_of
from apps.agents.ssh.shell import TERM_TYPE, Shell, open_shell

__all__ = [
    "BACKUP_SUFFIX",
    "COMMAND_TIMEOUT",
    "CONNECT_TIMEOUT",
    "KEEPALIVE_INTERVAL",
    "LOGIN_TIMEOUT",
    "MAX_ENTRIES",
    "MAX_OUTPUT",
    "MAX_READ",
    "TERM_TYPE",
    "CommandResult",
    "Connection",
    "HostKey",
    "KeyPair",
    "Listing",
    "RemoteEntry",
    "RemoteFile",
    "Shell",
    "Target",
    "WriteResult",
    "capture_host_key",
    "client_options",
    "command_line",
    "connect",
    "file_list",
    "file_read",
    "file_write",
    "generate_keypair",
    "open_shell",
    "parse_host_key",
    "public_key_of",
    "quote",
    "run_command",
]
