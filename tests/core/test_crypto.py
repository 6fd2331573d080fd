"""Secrets at rest: Fernet with a generated key file or JARVIS_FERNET_KEYS."""

from __future__ import annotations

import multiprocessing
import stat

import pytest
from cryptography.fernet import Fernet
from django.core.exceptions import ImproperlyConfigured

from apps.core import crypto


@pytest.fixture
def data_dir(settings, tmp_path):
    settings.DATA_DIR = tmp_path
    settings.FERNET_KEYS = []
    return tmp_path


def test_round_trip(data_dir):
    token = crypto.encrypt("sk-live-ünïcødé-1234")
    assert "sk-live" not in token
    assert crypto.decrypt(token) == "sk-live-ünïcødé-1234"


def test_a_generated_key_file_is_0600_and_reused(data_dir):
    token = crypto.encrypt("secret")
    key_file = data_dir / "fernet.key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    first = key_file.read_bytes()
    Fernet(first)  # a valid key
    crypto._multi.cache_clear()  # as a new process would
    assert crypto.decrypt(token) == "secret"
    crypto.encrypt("again")
    assert key_file.read_bytes() == first


def _encrypt_in_child(data_dir: str, queue) -> None:
    from pathlib import Path

    queue.put(crypto._file_key(Path(data_dir) / "fernet.key"))


def test_two_processes_end_up_with_the_same_key(tmp_path):
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    children = [
        ctx.Process(target=_encrypt_in_child, args=(str(tmp_path), queue)) for _ in range(4)
    ]
    for child in children:
        child.start()
    keys = {queue.get(timeout=10) for _ in children}
    for child in children:
        child.join()
    assert len(keys) == 1
    assert keys == {(tmp_path / "fernet.key").read_bytes().strip()}


def test_configured_keys_win_over_the_file(data_dir, settings):
    key = Fernet.generate_key().decode()
    settings.FERNET_KEYS = [key]
    token = crypto.encrypt("secret")
    assert Fernet(key.encode()).decrypt(token.encode()) == b"secret"
    assert not (data_dir / "fernet.key").exists()


def test_rotation_old_key_decrypts_new_key_encrypts(data_dir, settings):
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    settings.FERNET_KEYS = [old]
    token = crypto.encrypt("secret")
    settings.FERNET_KEYS = [new, old]
    assert crypto.decrypt(token) == "secret"
    fresh = crypto.encrypt("secret")
    assert Fernet(new.encode()).decrypt(fresh.encode()) == b"secret"
    rotated = crypto.rotate(token)
    settings.FERNET_KEYS = [new]
    assert crypto.decrypt(rotated) == "secret"
    with pytest.raises(crypto.SecretUndecryptable):
        crypto.decrypt(token)


def test_a_token_from_an_unknown_key_gives_a_clear_error(data_dir):
    foreign = Fernet(Fernet.generate_key()).encrypt(b"sk-foreign-secret").decode()
    with pytest.raises(crypto.SecretUndecryptable) as caught:
        crypto.decrypt(foreign)
    message = str(caught.value)
    assert "JARVIS_FERNET_KEYS" in message and "enter the secret again" in message
    assert "sk-foreign" not in message
    with pytest.raises(crypto.SecretUndecryptable):
        crypto.decrypt("not a token at all")
    with pytest.raises(crypto.SecretUndecryptable):
        crypto.rotate(foreign)


def test_a_malformed_configured_key_is_named_not_echoed(data_dir, settings):
    settings.FERNET_KEYS = ["hunter2-not-a-key"]
    with pytest.raises(ImproperlyConfigured) as caught:
        crypto.encrypt("x")
    assert "JARVIS_FERNET_KEYS: entry 1" in str(caught.value)
    assert "hunter2" not in str(caught.value)


@pytest.mark.parametrize(
    ("secret", "masked"),
    [
        ("sk-proj-abcdefghijklmnop9f2c", "sk-…9f2c"),
        ("sk-ant-api03-" + "x" * 40 + "WXYZ", "sk-…WXYZ"),
        ("short", crypto.MASK),
        ("fifteen-chars-x", crypto.MASK),
        ("", ""),
        (None, ""),
    ],
)
def test_masking(secret, masked):
    assert crypto.mask(secret) == masked
