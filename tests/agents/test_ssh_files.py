"""Files over SFTP: paths are paths (spaces, quotes, $ and ; are just names),
writes are atomic, a backup only when asked, failures named."""

from __future__ import annotations

import os

import pytest

from apps.agents import ssh
from apps.agents.errors import RemoteFileError
from tests.agents.conftest import run, with_connection
from tests.fakes.asyncssh_server import DiskFullSFTP, InProcessSSH, OpenSSHDiskFullSFTP

ODD_NAME = 'it\'s a "file"; $(touch pwned) `x` & name.txt'


def remote(target, operation, *args, **kwargs):
    async def work(conn):
        return await operation(conn, *args, **kwargs)

    return run(with_connection(target, work))


@pytest.fixture
def folder(sshd):
    return sshd.workdir("files with 'quotes' and spaces")


def test_write_then_read_a_file_with_an_odd_name(target, folder):
    path = folder / ODD_NAME
    written = remote(target, ssh.file_write, str(path), "héllo\n")
    assert written.created and written.atomic and written.backup_path is None
    assert written.size == len("héllo\n".encode())
    assert path.read_text() == "héllo\n"
    assert not (folder / "pwned").exists()  # nothing went through a shell
    read = remote(target, ssh.file_read, str(path))
    assert (read.text, read.size, read.truncated) == ("héllo\n", 7, False)


def test_a_write_replaces_atomically_and_leaves_no_temporary_file(target, folder, sshd):
    path = sshd.put(folder / "notes.md", "old", mode=0o640)
    written = remote(target, ssh.file_write, str(path), "new")
    assert not written.created and written.atomic
    assert path.read_text() == "new"
    assert oct(path.stat().st_mode & 0o777) == oct(0o640)  # its mode survives
    assert sorted(p.name for p in folder.iterdir()) == ["notes.md"]  # no backup, no temp


def test_keep_backup_saves_the_old_bytes_beside_it(target, folder, sshd):
    path = sshd.put(folder / ODD_NAME, b"old \xff bytes")
    written = remote(target, ssh.file_write, str(path), "new", keep_backup=True)
    backup = folder / (ODD_NAME + ".jarvis-bak")
    assert written.backup_path == str(backup)
    assert backup.read_bytes() == b"old \xff bytes"
    assert path.read_text() == "new"


def test_keep_backup_on_a_new_file_makes_no_backup(target, folder):
    written = remote(target, ssh.file_write, str(folder / "new.txt"), "x", keep_backup=True)
    assert written.created and written.backup_path is None
    assert sorted(p.name for p in folder.iterdir()) == ["new.txt"]


def test_writing_through_a_symlink_changes_the_file_and_keeps_the_link(target, folder, sshd):
    real = sshd.put(folder / "real.txt", "before")
    link = folder / "link.txt"
    link.symlink_to(real.name)
    os.lchown(link, sshd.uid, sshd.gid)
    remote(target, ssh.file_write, str(link), "after")
    assert link.is_symlink() and real.read_text() == "after"


def test_list_shows_names_kinds_and_sizes_directories_first(target, folder, sshd):
    (folder / ODD_NAME).write_text("12345")
    (folder / "sub dir").mkdir()
    (folder / "a.txt").write_text("")
    listing = remote(target, ssh.file_list, str(folder))
    assert [(e.name, e.kind) for e in listing.entries] == [
        ("sub dir", "dir"),
        ("a.txt", "file"),
        (ODD_NAME, "file"),
    ]
    assert listing.entries[2].size == 5 and listing.entries[2].modified is not None
    assert not listing.truncated


def test_a_long_listing_is_cut_and_says_so(target, folder):
    for n in range(30):
        (folder / f"f{n:02}").write_text("")
    listing = remote(target, ssh.file_list, str(folder), max_entries=10)
    assert listing.truncated and [e.name for e in listing.entries][-1] == "f09"


def test_a_large_file_is_read_up_to_the_cap(target, folder):
    (folder / "big.log").write_bytes(b"x" * 300_000)
    read = remote(target, ssh.file_read, str(folder / "big.log"), max_bytes=1000)
    assert (len(read.data), read.size, read.truncated) == (1000, 300_000, True)


def test_binary_files_read_as_bytes(target, folder):
    (folder / "blob.bin").write_bytes(b"\x00\x01\xffPNG")
    read = remote(target, ssh.file_read, str(folder / "blob.bin"))
    assert read.data == b"\x00\x01\xffPNG" and read.is_binary


def test_a_missing_file_is_named(target, folder):
    with pytest.raises(RemoteFileError) as caught:
        remote(target, ssh.file_read, str(folder / "nope.txt"))
    assert caught.value.reason == "not_found"
    assert str(caught.value) == f"cannot read {folder / 'nope.txt'}: no such file or directory"


def test_a_directory_is_not_read_as_a_file(target, folder):
    with pytest.raises(RemoteFileError, match="it is a directory"):
        remote(target, ssh.file_read, str(folder))


def test_permission_denied_is_named_for_read_and_write(target, folder):
    # Owned by root, mode 0600: the test account may neither read nor replace it.
    secret = folder / "root-only.txt"
    secret.write_text("root's")
    secret.chmod(0o600)
    with pytest.raises(RemoteFileError) as caught:
        remote(target, ssh.file_read, str(secret))
    assert caught.value.reason == "permission_denied"
    assert "permission denied" in str(caught.value)
    locked = folder / "locked dir"
    locked.mkdir(mode=0o755)  # root's: no new files in it for the account
    with pytest.raises(RemoteFileError) as caught:
        remote(target, ssh.file_write, str(locked / "new.txt"), "x")
    assert caught.value.reason == "permission_denied"
    assert list(locked.iterdir()) == []


def test_a_file_writable_in_a_locked_directory_is_rewritten_in_place(target, folder, sshd):
    locked = folder / "locked"
    locked.mkdir(mode=0o755)  # root's: the account cannot create the temporary file
    path = sshd.put(locked / "shared.txt", "old")
    written = remote(target, ssh.file_write, str(path), "new")
    assert path.read_text() == "new" and written.atomic is False


def test_a_full_disk_is_named(tmp_path):
    async def attempt(sftp):
        async with InProcessSSH(sftp=sftp) as server:
            conn = await ssh.connect(server.target())
            async with conn:
                with pytest.raises(RemoteFileError) as caught:
                    await ssh.file_write(conn, str(tmp_path / "out.txt"), "data")
        return caught.value

    # A server that names the cause (asyncssh's, passing on ENOSPC).
    error = run(attempt(DiskFullSFTP))
    assert error.reason == "no_space" and "the remote disk is full" in str(error)
    # OpenSSH's sftp-server, which can only say "Failure".
    error = run(attempt(OpenSSHDiskFullSFTP))
    assert "a full disk or quota is the usual cause" in str(error)
    assert list(tmp_path.iterdir()) == []  # the temporary file was removed


def test_a_nul_byte_in_a_path_is_refused_before_anything_is_sent(target, folder):
    with pytest.raises(RemoteFileError, match="NUL"):
        remote(target, ssh.file_write, f"{folder}/a\0b", "x")
