"""`manage.py users`: add, list, set-password, disable, unlock."""

from io import StringIO

import pytest
from django.conf import settings
from django.contrib.auth import SESSION_KEY
from django.core.management import CommandError, call_command
from django.test import Client

from apps.accounts.models import User
from tests.conftest import PASSWORD
from tests.support.processes import manage


def run(*args, stdin: str | None = None, monkeypatch=None) -> str:
    out = StringIO()
    if stdin is not None:
        monkeypatch.setattr("sys.stdin", StringIO(stdin))
    call_command("users", *args, stdout=out)
    return out.getvalue()


def test_add_with_a_password_from_stdin(db, monkeypatch):
    out = run(
        "add", "nora", "--password-stdin", stdin="a sturdy passphrase\n", monkeypatch=monkeypatch
    )
    assert "created member nora" in out
    nora = User.objects.get(username="nora")
    assert nora.check_password("a sturdy passphrase")
    assert nora.is_household_member and not nora.is_superuser


def test_add_an_admin_with_a_generated_password(db):
    out = run("add", "boss", "--admin")
    password = out.split("password: ", 1)[1].strip()
    boss = User.objects.get(username="boss")
    assert boss.is_superuser and boss.is_staff
    assert boss.check_password(password)


def test_a_weak_password_is_refused(db, monkeypatch):
    with pytest.raises(CommandError, match="password rejected"):
        run("add", "nora", "--password-stdin", stdin="123\n", monkeypatch=monkeypatch)
    assert not User.objects.filter(username="nora").exists()


@pytest.mark.django_db(transaction=True)
def test_a_taken_name_exits_1_with_a_clear_error(owner):
    result = manage("users", "add", "Olivia", "--password-stdin", input="another passphrase\n")
    assert result.returncode == 1
    assert "a user named 'Olivia' already exists" in result.stderr
    assert User.objects.filter(username__iexact="olivia").count() == 1


def test_list_shows_everyone(owner, outsider, admin):
    out = run("list")
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["NAME", "DISPLAY", "NAME"]
    assert any(line.startswith("olivia") and "household" in line for line in lines)
    assert any(line.startswith("oscar") and "member" in line for line in lines)
    assert any(line.startswith("root") and "admin" in line for line in lines)


def test_set_password_ends_existing_sessions(client, owner, monkeypatch):
    client.force_login(owner)
    out = run(
        "set-password",
        "olivia",
        "--password-stdin",
        stdin="brand new passphrase\n",
        monkeypatch=monkeypatch,
    )
    assert "ended 1 session" in out
    owner.refresh_from_db()
    assert owner.check_password("brand new passphrase")
    assert client.get("/settings/").status_code == 302


def test_disable_ends_their_sessions_and_blocks_sign_in(client, owner):
    client.force_login(owner)
    assert client.get("/settings/").status_code == 200
    out = run("disable", "olivia")
    assert "ended 1 session" in out
    assert client.get("/settings/").status_code == 302
    assert SESSION_KEY not in client.session
    owner.refresh_from_db()
    assert not owner.is_active
    run("enable", "olivia")
    owner.refresh_from_db()
    assert owner.is_active


def test_an_unknown_name_is_a_clear_error(db):
    with pytest.raises(CommandError, match="no user named 'ghost'"):
        run("disable", "ghost")


class TestUnlock:
    def lock(self, client, username, ip):
        for _ in range(settings.LOGIN_FAILURES_PER_USERNAME):
            client.post(
                "/accounts/login/", {"username": username, "password": "nope"}, REMOTE_ADDR=ip
            )

    def sign_in(self, client, username, ip):
        # A fresh browser each time: a signed-in one is sent on without a check.
        return Client().post(
            "/accounts/login/", {"username": username, "password": PASSWORD}, REMOTE_ADDR=ip
        )

    def test_unlocking_a_name_lets_its_owner_sign_in_again(self, client, owner):
        self.lock(client, "olivia", "10.0.0.1")
        self.lock(client, "olivia", "10.0.0.2")
        assert self.sign_in(client, "olivia", "10.0.0.1").status_code == 429
        out = run("unlock", "Olivia")
        assert "unlocked Olivia; forgot 10 failed attempt(s)" in out
        assert self.sign_in(client, "olivia", "10.0.0.1").status_code == 302

    def test_unlocking_an_address_lifts_its_lock_for_every_name(self, client, owner, member):
        for n in range(settings.LOGIN_FAILURES_PER_IP):
            client.post(
                "/accounts/login/",
                {"username": f"guess{n}", "password": "x"},
                REMOTE_ADDR="10.0.0.9",
            )
        self.lock(client, "olivia", "10.0.0.8")
        assert self.sign_in(client, "max", "10.0.0.9").status_code == 429
        run("unlock", "--address", "10.0.0.9")
        assert self.sign_in(client, "max", "10.0.0.9").status_code == 302
        # Only that address was forgotten.
        assert self.sign_in(client, "olivia", "10.0.0.8").status_code == 429

    def test_unlock_needs_a_name_or_an_address(self, db):
        with pytest.raises(CommandError, match="give a name"):
            run("unlock")
        with pytest.raises(CommandError, match="not an IP address"):
            run("unlock", "--address", "router")

    def test_it_runs_as_a_command(self, transactional_db, owner):
        result = manage("users", "unlock", "olivia")
        assert result.returncode == 0, result.stderr
        assert "unlocked olivia; forgot 0 failed attempt(s)" in result.stdout
