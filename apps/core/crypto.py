"""Secrets at rest: Fernet with key rotation.

Keys come from `settings.FERNET_KEYS` (JARVIS_FERNET_KEYS, comma-separated;
the first encrypts, every one decrypts) or, when that is empty, from a key
generated once into `DATA_DIR/fernet.key` (0600). Moving from the file to the
variable: put the new key first and the file's key second, run
`manage.py llm connections reencrypt`, then drop the old key.

Nothing here logs a secret or puts one into an exception message.
"""

from __future__ import annotations

import os
import time
from functools import lru_cache
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from apps.core.errors import JarvisError

KEY_FILE_NAME = "fernet.key"
MASK = "••••••••"
# Below this length a secret is masked completely: showing 7 of 12 characters
# would give most of it away.
MASK_SHOW_FROM = 16


class SecretUndecryptable(JarvisError):
    """A stored secret was encrypted with a key Jarvis no longer has."""

    def __init__(self) -> None:
        super().__init__(
            "A stored secret cannot be decrypted with the configured keys "
            "(JARVIS_FERNET_KEYS, else DATA_DIR/fernet.key). Restore the key it was "
            "encrypted with (list it after the current one in JARVIS_FERNET_KEYS), "
            "or enter the secret again."
        )


def key_file() -> Path:
    return Path(settings.DATA_DIR) / KEY_FILE_NAME


def _file_key(path: Path) -> bytes:
    """The key in the data dir, generated on first use."""
    if not path.exists():
        # O_EXCL: two processes starting at once must not write different keys.
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "wb") as handle:
                handle.write(Fernet.generate_key())
                handle.flush()
                os.fsync(handle.fileno())
    # Losing an O_EXCL race can mean reading the file between the winner's
    # create and write: wait briefly for the key to appear.
    for _ in range(40):
        key = path.read_bytes().strip()
        if key:
            return key
        time.sleep(0.05)
    raise ImproperlyConfigured(f"{path} is empty; remove it only if no secret was stored yet")


@lru_cache(maxsize=8)
def _multi(keys: tuple[str, ...], path: str) -> MultiFernet:
    if keys:
        fernets = []
        for position, key in enumerate(keys, start=1):
            try:
                fernets.append(Fernet(key.encode()))
            except (ValueError, TypeError):
                # Never echo the value: it is (meant to be) a secret.
                raise ImproperlyConfigured(
                    f"JARVIS_FERNET_KEYS: entry {position} is not a Fernet key "
                    "(32 url-safe base64-encoded bytes; make one with "
                    '`python -c "from cryptography.fernet import Fernet; '
                    'print(Fernet.generate_key().decode())"`)'
                ) from None
        return MultiFernet(fernets)
    try:
        return MultiFernet([Fernet(_file_key(Path(path)))])
    except ValueError:
        raise ImproperlyConfigured(f"{path} does not hold a Fernet key") from None


def _fernet() -> MultiFernet:
    keys = tuple(k.strip() for k in getattr(settings, "FERNET_KEYS", ()) if k.strip())
    return _multi(keys, str(key_file()))


def encrypt(text: str) -> str:
    """Encrypt with the current (first) key."""
    return _fernet().encrypt(text.encode("utf-8")).decode("ascii")


def decrypt(token: str) -> str:
    """Decrypt with any configured key; SecretUndecryptable if none fits."""
    try:
        return _fernet().decrypt(token.encode("ascii")).decode("utf-8")
    except (InvalidToken, UnicodeEncodeError, ValueError):
        raise SecretUndecryptable() from None


def rotate(token: str) -> str:
    """Re-encrypt a token under the current key (it may have been made with an older one)."""
    try:
        return _fernet().rotate(token.encode("ascii")).decode("ascii")
    except (InvalidToken, UnicodeEncodeError, ValueError):
        raise SecretUndecryptable() from None


def mask(secret: str | None) -> str:
    """`sk-…9f2c` for a long secret, bullets for a short one, "" for none."""
    if not secret:
        return ""
    if len(secret) < MASK_SHOW_FROM:
        return MASK
    return f"{secret[:3]}…{secret[-4:]}"
