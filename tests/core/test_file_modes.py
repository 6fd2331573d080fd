"""Jarvis's files are private to the account it runs as: after the steps
`make run` takes (migrate, collectstatic, seed_demo, serve, and someone using
it), every file in the data dir is 0600 and every folder 0700, even when the
shell that started it had the usual umask 022. An older install is tightened
by `manage.py migrate`; a vault's files are never touched."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.processes import ROOT, free_port, wait_for_port
from tests.support.web import csrf_token, signed_in_client

SHELL_UMASK = 0o022  # what a login shell usually has, and what an old install ran with


def jarvis_env(data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("JARVIS_")}
    env.pop("DJANGO_SETTINGS_MODULE", None)  # manage.py's default: jarvis_site.settings
    env.update({"JARVIS_DATA_DIR": str(data_dir), "JARVIS_HTTPS": "false", "PYTHONUNBUFFERED": "1"})
    return env


def manage(data_dir: Path, *args: str) -> str:
    result = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), *args],
        env=jarvis_env(data_dir),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        umask=SHELL_UMASK,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout + result.stderr


def too_open(root: Path, *, skip: Path | None = None) -> list[str]:
    found = []
    for folder, subfolders, files in os.walk(root):
        here = Path(folder)
        if skip is not None:
            subfolders[:] = [name for name in subfolders if here / name != skip]
        for path in [here, *(here / name for name in files)]:
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                continue  # a link's own mode means nothing; its target is checked where it is
            mode = stat.S_IMODE(info.st_mode)
            if mode & 0o077:
                found.append(f"{oct(mode)} {path.relative_to(root)}")
    return found


def use_it_as_alice(base: str, password: str) -> None:
    """Sign in, upload a note and start a draft, as a person would on the page."""
    with contextlib.closing(signed_in_client(base, "alice", password)) as client:
        csrf = {"X-CSRFToken": csrf_token(client, "/library/add/")}
        response = client.post(
            "/library/add/upload/",
            files={"files": ("shopping.md", b"# Shopping\n\nEggs, flour.\n", "text/markdown")},
            headers=csrf,
        )
        assert response.status_code == 200, response.text
        response = client.post(
            "/drafts/new/", data={"title": "Letter", "filename": "letter.md"}, headers=csrf
        )
        assert response.status_code == 302, response.text


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Path:
    """A data dir after the steps `make run` takes and someone using it; the
    tests below only read it (the second one works on a copy)."""
    data = tmp_path_factory.mktemp("make") / "var"
    manage(data, "migrate", "--noinput")
    manage(data, "collectstatic", "--noinput", "--verbosity", "0")
    seeded = manage(data, "seed_demo")
    password = re.search(r"member\s+alice\s+(\S+)", seeded)[1]
    port = free_port()
    serve = subprocess.Popen(
        [sys.executable, str(ROOT / "manage.py"), "serve", "--port", str(port)],
        env=jarvis_env(data),
        cwd=ROOT,
        umask=SHELL_UMASK,
    )
    try:
        wait_for_port(port, serve)
        use_it_as_alice(f"http://127.0.0.1:{port}", password)
    finally:
        serve.send_signal(signal.SIGINT)
        serve.wait(timeout=30)
    return data


def test_after_make_runs_steps_everything_in_the_data_dir_is_private(made):
    data = made
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    for name in ("jarvis.sqlite3", "huey.sqlite3", "secret_key"):
        assert stat.S_IMODE((data / name).stat().st_mode) == 0o600, name
    uploads = [p for p in (data / "uploads").rglob("*") if p.is_file()]
    drafts = [p for p in (data / "drafts").rglob("*") if p.is_file()]
    assert uploads and drafts  # the walk below saw them
    assert too_open(data) == []


def test_migrate_tightens_an_older_install_but_not_a_vault(made, tmp_path):
    # An install (a copy of the one above, so it is not migrated from scratch
    # again) with a person's upload and a vault of their own.
    data = tmp_path / "var"
    shutil.copytree(made, data, symlinks=True)
    (data / "uploads" / "3" / "abc").mkdir(parents=True)
    (data / "uploads" / "3" / "abc" / "report.pdf").write_bytes(b"%PDF-1.4")
    vault_note = data / "vaults" / "olivia" / "note.md"
    vault_note.parent.mkdir(parents=True)
    vault_note.write_text("# mine\n")
    # As an install from before umask 077 left it.
    for folder, _subfolders, files in os.walk(data):
        os.chmod(folder, 0o755)  # noqa: S103 (making the old, open state on purpose)
        for name in files:
            os.chmod(Path(folder) / name, 0o644)
    assert too_open(data)

    output = manage(data, "migrate", "--noinput")

    assert "made" in output and "private to this account" in output
    assert too_open(data, skip=data / "vaults") == []
    assert stat.S_IMODE(vault_note.stat().st_mode) == 0o644  # the person's, untouched
    assert stat.S_IMODE(vault_note.parent.stat().st_mode) == 0o755
