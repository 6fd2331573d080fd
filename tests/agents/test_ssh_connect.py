"""Connecting: host keys pinned, credentials only the profile's, failures named."""

from __future__ import annotations

import socket
import subprocess
import threading
from dataclasses import replace
from pathlib import Path

import asyncssh
import pytest

from apps.agents import ssh
from apps.agents.errors import (
    AuthRefused,
    HostKeyChanged,
    HostKeyUnknown,
    HostUnreachable,
    InvalidKey,
)
from tests.agents.conftest import run, target_for, with_connection
from tests.fakes.sshd import free_port, keygen


async def _whoami(conn):
    return (await ssh.run_command(conn, "whoami")).stdout.strip()


def test_a_first_connect_shows_the_fingerprint_and_goes_no_further(sshd):
    mark = sshd.mark()
    with pytest.raises(HostKeyUnknown) as caught:
        run(ssh.connect(target_for(sshd, host_key=None)))
    assert caught.value.fingerprint == sshd.host_fingerprint  # as ssh-keygen -l prints it
    assert caught.value.fingerprint in str(caught.value)
    assert caught.value.key_line == " ".join(sshd.host_key_line.split()[:2])
    # Key exchange only: the server saw no user name and no credential.
    log = sshd.log_since(mark, expect="[preauth]")  # sshd's line for a connection ended early
    assert "[preauth]" in log
    assert sshd.user not in log and "publickey" not in log and "password" not in log


def test_the_pinned_key_connects(target, sshd):
    assert run(with_connection(target, _whoami)) == sshd.user


def test_a_changed_host_key_is_refused_naming_both_fingerprints(fresh_sshd):
    pinned = target_for(fresh_sshd)
    old = fresh_sshd.host_fingerprint
    fresh_sshd.restart(new_host_key=True)
    mark = fresh_sshd.mark()
    with pytest.raises(HostKeyChanged) as caught:
        run(ssh.connect(pinned))
    message = str(caught.value)
    assert message.startswith(
        f"host key changed: expected {old}, got {fresh_sshd.host_fingerprint}"
    )
    # Refused before authentication: the key was never offered to the impostor.
    log = fresh_sshd.log_since(mark, expect="[preauth]")
    assert "[preauth]" in log
    assert fresh_sshd.user not in log and "publickey" not in log


def test_a_host_key_of_another_type_is_a_changed_key_too(fresh_sshd):
    pinned = target_for(fresh_sshd)
    fresh_sshd.restart(new_host_key=True, key_type="ecdsa")
    with pytest.raises(HostKeyChanged) as caught:
        run(ssh.connect(pinned))
    assert caught.value.got == fresh_sshd.host_fingerprint
    assert "host key changed" in str(caught.value)


def test_password_login(sshd):
    mark = sshd.mark()
    by_password = target_for(sshd, private_key=None, password=sshd.password)
    assert run(with_connection(by_password, _whoami)) == sshd.user
    log = sshd.log_since(mark, expect="Accepted password")
    assert f"Accepted password for {sshd.user}" in log
    assert "publickey" not in log  # a password profile offers no key at all


def test_a_wrong_password_is_refused(sshd):
    wrong = target_for(sshd, private_key=None, password="not-" + sshd.password)
    with pytest.raises(AuthRefused) as caught:
        run(ssh.connect(wrong))
    assert sshd.user in str(caught.value) and "password" in str(caught.value)


def test_a_key_the_server_does_not_know_is_refused(sshd):
    stranger = target_for(sshd, private_key=ssh.generate_keypair().private_key)
    with pytest.raises(AuthRefused, match="refused 'jarvis-sshtest' with the profile's key"):
        run(ssh.connect(stranger))


def test_a_closed_port_is_unreachable(sshd):
    closed = target_for(sshd, port=free_port())
    with pytest.raises(HostUnreachable, match="refused the connection"):
        run(ssh.connect(closed, connect_timeout=5))


def test_a_host_that_never_answers_gives_up_at_the_connect_timeout(sshd):
    # Accepts TCP (the kernel does, from the backlog) and never says a word.
    with socket.create_server(("127.0.0.1", 0)) as silent:
        port = silent.getsockname()[1]
        with pytest.raises(HostUnreachable, match=f"127.0.0.1:{port} did not answer within 0.5 s"):
            run(ssh.connect(target_for(sshd, port=port), connect_timeout=0.5))


def test_an_unknown_host_name_is_unreachable(sshd):
    with pytest.raises(HostUnreachable, match="cannot find the host"):
        run(ssh.connect(target_for(sshd, host="no-such-host.invalid"), connect_timeout=5))


# --- nothing of the service account's own SSH setup is used


@pytest.fixture
def poisoned_home(tmp_path, monkeypatch, sshd):
    """A HOME whose ~/.ssh would let a careless client in (the server's authorized
    key as id_ed25519), redirect it (a config with a ProxyCommand and another
    port) and an SSH_AUTH_SOCK that records anyone knocking."""
    dot_ssh = tmp_path / ".ssh"
    dot_ssh.mkdir(mode=0o700)
    (dot_ssh / "id_ed25519").write_text(sshd.client_key)
    (dot_ssh / "id_ed25519").chmod(0o600)
    marker = tmp_path / "proxy-ran"
    (dot_ssh / "config").write_text(
        f"Host *\n  ProxyCommand touch {marker}\n  Port 1\n  User root\n  IdentityFile ~/.ssh/id_ed25519\n"
    )
    (dot_ssh / "known_hosts").write_text(f"[{sshd.host}]:{sshd.port} {sshd.host_key_line}\n")
    agent_path = tmp_path / "agent.sock"
    agent = socket.socket(socket.AF_UNIX)
    agent.bind(str(agent_path))
    agent.listen()
    knocks: list[int] = []

    def answer() -> None:
        try:
            conn, _ = agent.accept()
            knocks.append(1)
            conn.close()
        except OSError:
            pass

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("SSH_AUTH_SOCK", str(agent_path))
    yield {"marker": marker, "knocks": knocks}
    agent.close()


def test_keys_in_home_are_not_used_when_the_profile_has_another(sshd, poisoned_home):
    # ~/.ssh/id_ed25519 would be accepted; the profile's own key is not.
    stranger = target_for(sshd, private_key=ssh.generate_keypair().private_key)
    with pytest.raises(AuthRefused):
        run(ssh.connect(stranger))
    assert not poisoned_home["marker"].exists()  # no ProxyCommand
    assert poisoned_home["knocks"] == []  # no agent


def test_a_password_profile_offers_no_key_even_with_keys_in_home(sshd, poisoned_home):
    mark = sshd.mark()
    with pytest.raises(AuthRefused):
        run(ssh.connect(target_for(sshd, private_key=None, password="wrong")))
    log = sshd.log_since(mark, expect="Failed password")
    assert "Failed password" in log and "publickey" not in log
    assert poisoned_home["knocks"] == []


def test_the_config_file_and_known_hosts_in_home_are_ignored(sshd, poisoned_home):
    # The config says port 1 and a ProxyCommand; known_hosts trusts the server.
    # Neither counts: the connection goes where the target says, and an
    # unpinned target is still unknown.
    assert run(with_connection(target_for(sshd), _whoami)) == sshd.user
    with pytest.raises(HostKeyUnknown):
        run(ssh.connect(target_for(sshd, host_key=None)))
    assert not poisoned_home["marker"].exists()
    assert poisoned_home["knocks"] == []


def test_the_options_name_every_default_explicitly(sshd, poisoned_home):
    # Read back from the options object asyncssh connects with; no server needed.
    options = ssh.client_options(target_for(sshd))
    assert options.config.get("ProxyCommand") is None and options.proxy_command is None
    assert options.username == sshd.user  # the config's "User root" did not count
    assert not options.agent_path and options.agent_forward_path is None
    assert [k.public_data for k in options.client_keys] == [
        asyncssh.import_private_key(sshd.client_key).public_data
    ]
    assert options.known_hosts[0] == [asyncssh.import_public_key(sshd.host_key_line)]
    assert options.x11_forwarding is False
    assert options.x509_trusted_certs is None
    password_only = ssh.client_options(target_for(sshd, private_key=None, password="x"))
    assert password_only.client_keys is None


# --- keys


def test_a_generated_key_pair_logs_in_once_its_public_key_is_authorized(fresh_sshd):
    pair = ssh.generate_keypair(comment="jarvis")
    assert pair.public_key.startswith("ssh-ed25519 ") and pair.public_key.endswith(" jarvis")
    assert pair.private_key.startswith("-----BEGIN OPENSSH PRIVATE KEY-----")
    with pytest.raises(AuthRefused):
        run(ssh.connect(target_for(fresh_sshd, private_key=pair.private_key)))
    authorized = fresh_sshd.dir / "authorized_keys"
    authorized.write_text(authorized.read_text() + pair.public_key + "\n")
    assert run(with_connection(target_for(fresh_sshd, private_key=pair.private_key), _whoami))


def test_a_key_made_by_ssh_keygen_reads_back_its_public_line(tmp_path):
    keygen(tmp_path / "k", kind="rsa", comment="")
    line = ssh.public_key_of((tmp_path / "k").read_text())
    assert line.split()[:2] == Path(f"{tmp_path / 'k'}.pub").read_text().split()[:2]


def test_a_passphrase_protected_key_is_refused_with_a_way_out(tmp_path):
    path = tmp_path / "locked"
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "secret-phrase", "-f", str(path)], check=True
    )
    text = path.read_text()
    with pytest.raises(InvalidKey, match="passphrase") as caught:
        ssh.public_key_of(text)
    assert text[40:80] not in str(caught.value)


def test_garbage_is_not_a_key_and_is_not_echoed():
    garbage = "-----BEGIN OPENSSH PRIVATE KEY-----\nc2VjcmV0LXNlY3JldC1zZWNyZXQ=\n-----END"
    with pytest.raises(InvalidKey) as caught:
        ssh.public_key_of(garbage)
    assert "c2VjcmV0" not in str(caught.value)


def test_a_targets_repr_holds_no_secret(sshd):
    target = target_for(sshd, password="hunter2-password")
    assert "hunter2" not in repr(target)
    assert "PRIVATE KEY" not in repr(target) and sshd.client_key[40:80] not in repr(target)


def test_a_pinned_key_line_is_stored_without_its_comment(sshd):
    key = ssh.parse_host_key(sshd.host_key_line + " root@somewhere")
    assert key.line == " ".join(sshd.host_key_line.split()[:2])
    assert key.fingerprint == sshd.host_fingerprint
    with pytest.raises(InvalidKey):
        ssh.parse_host_key("ssh-ed25519 not-base64")
    assert replace(target_for(sshd), host_key=key.line).host_key == key.line
