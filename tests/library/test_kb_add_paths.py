"""`kb add --owner NAME PATH` with a local path reads only files under the
vaults root, symlinks followed first, and never one of Jarvis's own files
(its keys, database, uploads, drafts), however the roots are configured. A
folder holding Jarvis's data cannot be registered as a vault either."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.core.management import CommandError, call_command

from apps.library.models import Document, Source
from apps.library.services.adding import upload_add


def kb(*args) -> str:
    out = StringIO()
    call_command("kb", *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def data_dir(tmp_path, settings) -> Path:
    """A data dir of the test's own, laid out as Jarvis lays it out."""
    data = tmp_path / "var"
    data.mkdir()
    settings.DATA_DIR = data
    settings.UPLOADS_DIR = data / "uploads"
    settings.DRAFTS_ROOT = data / "drafts"
    (data / "secret_key").write_text("the site's signing key\n")
    (data / "fernet.key").write_text("the key to every stored API key\n")
    return data


def refused(path, match: str) -> None:
    with pytest.raises(CommandError, match=match):
        kb("add", "--owner", "olivia", str(path))
    assert not Document.objects.exists()


def test_a_file_under_the_vaults_root_is_added(owner, vaults_root, data_dir):
    note = vaults_root / "olivia" / "soup.md"
    note.parent.mkdir()
    note.write_text("# Lentil soup\n\nRed lentils.\n")
    assert "Lentil soup" in kb("add", "--owner", "olivia", str(note))


def test_the_default_vaults_root_inside_the_data_dir_is_the_households(owner, data_dir, settings):
    settings.VAULTS_ROOT = data_dir / "vaults"
    note = data_dir / "vaults" / "olivia" / "soup.md"
    note.parent.mkdir(parents=True)
    note.write_text("# Lentil soup\n\nRed lentils.\n")
    assert "Lentil soup" in kb("add", "--owner", "olivia", str(note))


@pytest.mark.parametrize("path", ["/etc/hostname", "/etc/passwd", "/proc/self/environ"])
def test_a_file_outside_the_vaults_root_is_refused(owner, vaults_root, data_dir, path):
    refused(path, "outside the vaults root")


@pytest.mark.parametrize("roots", ["separate", "vaults root above the data dir", "the same"])
@pytest.mark.parametrize("name", ["secret_key", "fernet.key", "database", "upload", "draft"])
def test_jarvis_own_files_are_refused_however_the_roots_lie(
    owner, data_dir, settings, tmp_path, roots, name
):
    settings.VAULTS_ROOT = {
        "separate": tmp_path / "vaults",
        "vaults root above the data dir": tmp_path,
        "the same": data_dir,
    }[roots]
    Path(settings.VAULTS_ROOT).mkdir(exist_ok=True)
    if name == "database":
        path = Path(django_settings.DATABASES["default"]["NAME"])
        settings.DATABASE_FILE = path
    elif name == "upload":
        upload_add(owner=owner, name="tax.md", data=b"# Tax\n\nSecret numbers.\n")
        Document.objects.all().delete()  # its stored copy stays; only the file matters here
        path = next((data_dir / "uploads").rglob("tax.md"))
    elif name == "draft":
        path = data_dir / "drafts" / "1" / "abc" / "letter.md"
        path.parent.mkdir(parents=True)
        path.write_text("Dear Sir,\n")
    else:
        path = data_dir / name
    refused(path, "part of Jarvis's own data")


def test_a_symlink_in_a_vault_to_jarvis_own_key_is_refused(owner, vaults_root, data_dir):
    link = vaults_root / "olivia" / "innocent.md"
    link.parent.mkdir()
    link.symlink_to(data_dir / "secret_key")
    refused(link, "part of Jarvis's own data")


def test_a_symlink_in_a_vault_to_a_file_elsewhere_is_refused(owner, vaults_root, data_dir):
    link = vaults_root / "hosts.md"
    link.symlink_to("/etc/hosts")
    refused(link, "outside the vaults root")


def test_a_folder_holding_jarvis_data_cannot_be_registered(owner, data_dir, settings, tmp_path):
    settings.VAULTS_ROOT = tmp_path  # above the data dir
    for folder in (tmp_path, data_dir, data_dir / "uploads"):
        folder.mkdir(exist_ok=True)
        with pytest.raises(CommandError, match="holds Jarvis's own data"):
            kb("sources", "add", "--owner", "olivia", "--name", "X", "--path", str(folder))
    assert not Source.objects.filter(kind="vault").exists()
