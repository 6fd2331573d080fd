"""`manage.py agent`: the forms the feature is checked by from outside."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from apps.agents.models import SSHProfile
from tests.agents.conftest import grant_agents
from tests.support.processes import manage


def agent(*args: str, stdin: str | None = None, monkeypatch=None) -> str:
    out = StringIO()
    if stdin is not None:
        monkeypatch.setattr("sys.stdin", StringIO(stdin))
    call_command("agent", *args, stdout=out)
    return out.getvalue()


def add_args(sshd, *secret: str, name: str = "box", user: str = "olivia") -> list[str]:
    return [
        "profiles", "add", "--user", user, "--name", name, "--host", sshd.host,
        "--port", str(sshd.port), "--username", sshd.user, *secret,
    ]  # fmt: skip


def test_add_with_a_key_file_then_list(agent_owner, sshd):
    out = agent(*add_args(sshd, "--key-file", str(sshd.client_key_path)))
    profile = SSHProfile.objects.get(owner=agent_owner)
    assert out.strip() == f"added SSH profile 'box' (id {profile.pk})"
    assert "PRIVATE" not in out
    listing = agent("profiles", "list", "--user", "olivia")
    assert listing.splitlines()[0].split() == [
        "NAME", "OWNER", "HOST", "PORT", "USER", "AUTH", "HOST", "KEY",
    ]  # fmt: skip
    assert listing.splitlines()[1].split()[:6] == [
        "box", "olivia", sshd.host, str(sshd.port), sshd.user, "key",
    ]  # fmt: skip
    assert "not accepted yet" in listing


def test_generate_key_prints_the_public_key_to_authorize(agent_owner, sshd):
    out = agent(*add_args(sshd, "--generate-key"))
    public = SSHProfile.objects.get(owner=agent_owner).public_key
    assert public.startswith("ssh-ed25519 ")
    assert out.splitlines()[-1] == public
    assert f"authorized_keys of {sshd.user} on {sshd.host}" in out
    assert "PRIVATE" not in out


def test_password_from_stdin(agent_owner, sshd, monkeypatch):
    agent(*add_args(sshd, "--password-stdin"), stdin=sshd.password + "\n", monkeypatch=monkeypatch)
    profile = SSHProfile.objects.get(owner=agent_owner)
    assert profile.auth == "password" and profile.password == sshd.password


def test_list_json_has_no_secret(agent_owner, sshd, monkeypatch):
    agent(*add_args(sshd, "--password-stdin"), stdin="hunter2hunter2\n", monkeypatch=monkeypatch)
    rows = json.loads(agent("profiles", "list", "--user", "olivia", "--json"))
    assert rows[0]["name"] == "box" and rows[0]["own"] is True
    assert rows[0]["host_key_fingerprint"] == "" and rows[0]["auth"] == "password"
    assert "hunter2" not in json.dumps(rows)


def test_one_secret_is_required(agent_owner, sshd):
    with pytest.raises(CommandError):
        agent(*add_args(sshd))


def test_a_person_without_the_permission_is_refused(owner, sshd):
    with pytest.raises(CommandError, match="may not use agent chats"):
        agent(*add_args(sshd, "--generate-key"))
    with pytest.raises(CommandError, match="may not use agent chats"):
        agent("profiles", "list", "--user", "olivia")
    assert not SSHProfile.objects.exists()


def test_check_first_refuses_then_accepts_then_connects(agent_owner, sshd):
    agent(*add_args(sshd, "--key-file", str(sshd.client_key_path)))
    with pytest.raises(CommandError, match="--accept-host-key") as caught:
        agent("check", "--user", "olivia", "--profile", "box")
    assert sshd.host_fingerprint in str(caught.value)
    out = agent("check", "--user", "olivia", "--profile", "box", "--accept-host-key")
    lines = out.splitlines()
    assert lines[0] == f"host key {sshd.host_fingerprint} (accepted now)"
    assert lines[1] == "ok" and lines[2].startswith("Linux ")
    again = agent("check", "--user", "olivia", "--profile", "box").splitlines()
    assert again[0] == f"host key {sshd.host_fingerprint}" and again[1] == "ok"


def test_check_an_unknown_profile(agent_owner):
    with pytest.raises(CommandError, match="no SSH profile named 'nope'"):
        agent("check", "--user", "olivia", "--profile", "nope")


# --- as a real process: exit codes and streams, the way scripts see them


@pytest.mark.django_db(transaction=True)
def test_the_command_line_round_trip(make_user, fresh_sshd):
    grant_agents(make_user("olivia"))
    added = manage(
        "agent", *add_args(fresh_sshd, "--password-stdin"), input=fresh_sshd.password + "\n"
    )
    assert added.returncode == 0, added.stderr

    first = manage("agent", "check", "--user", "olivia", "--profile", "box")
    assert first.returncode != 0
    assert first.stdout.strip() == f"host key {fresh_sshd.host_fingerprint}"
    assert "--accept-host-key" in first.stderr

    accepted = manage("agent", "check", "--user", "olivia", "--profile", "box", "--accept-host-key")
    assert accepted.returncode == 0, accepted.stderr
    assert accepted.stdout.splitlines()[1:2] == ["ok"]

    fresh_sshd.restart(new_host_key=True)
    changed = manage("agent", "check", "--user", "olivia", "--profile", "box")
    assert changed.returncode != 0
    assert "host key changed: expected" in changed.stderr
    assert fresh_sshd.password not in changed.stdout + changed.stderr
