"""Settings come from JARVIS_* variables; a bad one stops startup, naming it."""

import os
import stat
import subprocess
import sys

import pytest
from django.core.exceptions import ImproperlyConfigured

from jarvis_site import env
from tests.support.processes import ROOT


def run_manage(args, tmp_path, **extra):
    environment = {key: value for key, value in os.environ.items() if not key.startswith("JARVIS_")}
    environment.update(
        {"DJANGO_SETTINGS_MODULE": "jarvis_site.settings", "JARVIS_DATA_DIR": str(tmp_path)}
    )
    environment.update(extra)
    return subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), *args],
        capture_output=True,
        text=True,
        env=environment,
        cwd=ROOT,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("JARVIS_DEBUG", "maybe"),
        ("JARVIS_WORKER_THREADS", "two"),
        ("JARVIS_SESSION_DAYS", "0"),
        ("JARVIS_TIME_ZONE", "Mars/Olympus_Mons"),
        ("JARVIS_LOG_LEVEL", "LOUD"),
        ("JARVIS_TRUSTED_PROXIES", "the-router"),
        ("JARVIS_ALLOWED_ORIGINS", "jarvis.home.arpa"),
        ("JARVIS_ALLOWED_ORIGINS", "https://jarvis.home.arpa/chat/"),
        ("JARVIS_ALLOWED_ORIGINS", "ftp://jarvis.home.arpa"),
    ],
)
def test_a_malformed_variable_stops_startup_with_its_name(tmp_path, name, value):
    result = run_manage(["check"], tmp_path, **{name: value})
    assert result.returncode == 1
    assert name in result.stderr
    assert "Traceback" not in result.stderr  # one clear line, not a stack dump


def test_the_secret_key_is_generated_once_private_and_reused(tmp_path):
    code = "from django.conf import settings; print(settings.SECRET_KEY)"
    first = run_manage(["shell", "--no-imports", "-c", code], tmp_path)
    second = run_manage(["shell", "--no-imports", "-c", code], tmp_path)
    assert first.returncode == 0, first.stderr
    key_file = tmp_path / "secret_key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert first.stdout.strip() == second.stdout.strip() == key_file.read_text().strip()
    assert len(first.stdout.strip()) >= 50


def test_an_explicit_secret_key_wins_and_no_file_is_written(tmp_path):
    code = "from django.conf import settings; print(settings.SECRET_KEY)"
    result = run_manage(["shell", "--no-imports", "-c", code], tmp_path, JARVIS_SECRET_KEY="k" * 60)
    assert result.stdout.strip() == "k" * 60
    assert not (tmp_path / "secret_key").exists()


def test_the_production_deploy_check_passes(tmp_path):
    result = run_manage(
        ["check", "--deploy", "--fail-level", "WARNING"],
        tmp_path,
        JARVIS_DEBUG="false",
        JARVIS_ALLOWED_HOSTS="jarvis.home.arpa",
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_deploy_check_flags_plain_http_in_production(tmp_path):
    # The check is meaningful: turning TLS off in production is reported.
    result = run_manage(
        ["check", "--deploy", "--fail-level", "WARNING"],
        tmp_path,
        JARVIS_DEBUG="false",
        JARVIS_ALLOWED_HOSTS="jarvis.home.arpa",
        JARVIS_HTTPS="false",
    )
    assert result.returncode != 0
    assert "SECURE_SSL_REDIRECT" in result.stderr + result.stdout


def test_the_data_dir_holds_database_and_queue(tmp_path):
    code = (
        "from django.conf import settings; "
        "print(settings.DATABASES['default']['NAME']); print(settings.HUEY['filename'])"
    )
    result = run_manage(["shell", "--no-imports", "-c", code], tmp_path)
    database, queue = result.stdout.split()
    assert database == str(tmp_path / "jarvis.sqlite3")
    assert queue == str(tmp_path / "huey.sqlite3")


class TestEnvReaders:
    def test_booleans_accept_the_usual_words(self, monkeypatch):
        for word, expected in [("yes", True), ("ON", True), ("0", False), ("false", False)]:
            monkeypatch.setenv("JARVIS_X", word)
            assert env.env_bool("JARVIS_X", not expected) is expected

    def test_unset_or_blank_means_the_default(self, monkeypatch):
        monkeypatch.setenv("JARVIS_X", "  ")
        assert env.env_int("JARVIS_X", 7) == 7
        monkeypatch.delenv("JARVIS_X")
        assert env.env_list("JARVIS_X", ["a"]) == ["a"]

    def test_lists_split_on_commas(self, monkeypatch):
        monkeypatch.setenv("JARVIS_X", "a.example, b.example,,")
        assert env.env_list("JARVIS_X", []) == ["a.example", "b.example"]

    def test_urls_must_be_http(self, monkeypatch):
        monkeypatch.setenv("JARVIS_X", "ftp://mirror")
        with pytest.raises(ImproperlyConfigured, match="JARVIS_X"):
            env.env_url("JARVIS_X", "https://example.org")

    def test_minimums_are_enforced(self, monkeypatch):
        monkeypatch.setenv("JARVIS_X", "-3")
        with pytest.raises(ImproperlyConfigured, match="at least 1"):
            env.env_int("JARVIS_X", 1, minimum=1)
