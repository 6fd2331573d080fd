"""Keys: generating a profile's key pair, reading a pasted one, host key lines."""

from __future__ import annotations

from dataclasses import dataclass, field

import asyncssh

from apps.agents.errors import InvalidKey


@dataclass(frozen=True)
class HostKey:
    line: str  # "ssh-ed25519 AAAA…", no comment
    fingerprint: str  # "SHA256:…"


@dataclass(frozen=True)
class KeyPair:
    private_key: str = field(repr=False)  # OpenSSH format, no passphrase
    public_key: str  # the authorized_keys line


def load_private_key(text: str) -> asyncssh.SSHKey:
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
    return _public_line(load_private_key(private_key))


def generate_keypair(comment: str = "jarvis") -> KeyPair:
    """A new ed25519 key pair."""
    key = asyncssh.generate_private_key("ssh-ed25519", comment=comment)
    return KeyPair(
        private_key=key.export_private_key("openssh").decode("ascii"),
        public_key=_public_line(key),
    )


def host_key_of(key: asyncssh.SSHKey) -> HostKey:
    key.set_comment(None)
    return HostKey(line=_public_line(key), fingerprint=key.get_fingerprint("sha256"))


def parse_host_key(line: str) -> HostKey:
    """A host key line ("ssh-ed25519 AAAA… [comment]") in canonical form."""
    try:
        key = asyncssh.import_public_key(line.strip())
    except (asyncssh.KeyImportError, ValueError):
        raise InvalidKey("this is not an OpenSSH public key line") from None
    return host_key_of(key)
