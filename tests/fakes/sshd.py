"""A real OpenSSH server for the agent tests: Debian's /usr/sbin/sshd on a free
loopback port, with a config, host key and authorized key of its own.

Nothing of the machine's own SSH setup is used or changed: the server reads
only the files in its private directory (`-f <own config>`), never
/etc/ssh/sshd_config, and listens on 127.0.0.1 only.

Who logs in. The suite runs as root (CI, `make test`), and root bypasses file
permissions, so logging in as root could not show a "permission denied". The
server therefore admits exactly one account, `jarvis-sshtest`, created with
useradd the first time it is missing (a system account with its own home under
/var/lib). Its password is random (32 bytes from `secrets`), kept root-only in
/run/jarvis-sshtest.password and set with chpasswd when that file is first made,
so concurrent workers and concurrent test runs share one password and none of
them can lock another out; after a reboot /run is empty and a new password is
set. Nobody knows it but root, so the account is no easier to enter through the
machine's own sshd than a locked one. `UsePAM no` makes our sshd check the
password against /etc/shadow itself.

Starting the server needs root (privilege separation and the test account);
without it the fixture fails with a message saying so, it is not skipped.
"""

from __future__ import annotations

import fcntl
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

SSHD = "/usr/sbin/sshd"
SFTP_SERVER = "/usr/lib/openssh/sftp-server"
SSH_KEYGEN = "/usr/bin/ssh-keygen"
TEST_USER = "jarvis-sshtest"
TEST_HOME = Path("/var/lib/jarvis-sshtest")
PASSWORD_FILE = Path("/run/jarvis-sshtest.password")
LOCK_FILE = Path("/run/jarvis-sshtest.lock")
# sshd's privilege-separation directory; Debian's package creates it at boot
# through systemd, which a container never runs.
PRIVSEP_DIR = Path("/run/sshd")


class SSHDUnavailable(RuntimeError):
    pass


def _require_tools() -> None:
    for tool in (SSHD, SFTP_SERVER, SSH_KEYGEN):
        if not os.access(tool, os.X_OK):
            raise SSHDUnavailable(
                f"{tool} is missing: install Debian's openssh-server and openssh-client "
                "(make test does)"
            )
    if os.geteuid() != 0:
        raise SSHDUnavailable(
            "the SSH tests start a real sshd and need root (as in CI and make test's "
            "container); run them as root"
        )


def ensure_test_account() -> str:
    """Create the test account if missing; return its password."""
    _require_tools()
    PRIVSEP_DIR.mkdir(mode=0o755, exist_ok=True)
    with open(LOCK_FILE, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # workers and runs start at once
        try:
            pwd.getpwnam(TEST_USER)
        except KeyError:
            subprocess.run(
                [
                    "useradd", "--system", "--create-home", "--home-dir", str(TEST_HOME),
                    "--shell", "/bin/bash", "--comment", "Jarvis SSH tests", TEST_USER,
                ],
                check=True, capture_output=True, timeout=30,
            )  # fmt: skip
            PASSWORD_FILE.unlink(missing_ok=True)  # a new account needs its password set
        if not PASSWORD_FILE.exists():
            password = secrets.token_urlsafe(32)
            subprocess.run(
                ["chpasswd"],
                input=f"{TEST_USER}:{password}\n",
                text=True,
                check=True,
                capture_output=True,
                timeout=30,
            )
            fd = os.open(PASSWORD_FILE, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as handle:
                handle.write(password)
        return PASSWORD_FILE.read_text().strip()


def keygen(path: Path, kind: str = "ed25519", comment: str = "") -> None:
    """An OpenSSH key pair at `path` and `path.pub`, no passphrase."""
    path.unlink(missing_ok=True)
    Path(f"{path}.pub").unlink(missing_ok=True)
    subprocess.run(
        [SSH_KEYGEN, "-q", "-t", kind, "-N", "", "-C", comment, "-f", str(path)],
        check=True,
        capture_output=True,
        timeout=30,
    )


def fingerprint(public_key_path: Path) -> str:
    """`SHA256:…` as ssh-keygen prints it (an independent check of ours)."""
    out = subprocess.run(
        [SSH_KEYGEN, "-l", "-E", "sha256", "-f", str(public_key_path)],
        check=True,
        capture_output=True,
        text=True,
        timeout=30,
    ).stdout
    return out.split()[1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class FakeSSHD:
    """`with FakeSSHD() as server:` a running sshd; `server.restart(new_host_key=True)`
    brings it back on the same port with another host key."""

    host = "127.0.0.1"
    user = TEST_USER

    def __init__(self) -> None:
        self.password = ensure_test_account()
        account = pwd.getpwnam(TEST_USER)
        self.uid, self.gid = account.pw_uid, account.pw_gid
        # Outside JARVIS_TEST_ROOT (mode 0700): the test account must be able
        # to reach its authorized_keys (sshd reads it as that user) and its
        # work directory. 0711: it can pass through, not list.
        self.dir = Path(tempfile.mkdtemp(prefix="jarvis-sshd-"))
        self.dir.chmod(0o711)
        self.port = free_port()
        self.process: subprocess.Popen | None = None
        self.host_key_path = self.dir / "host_key"
        self.client_key_path = self.dir / "client_key"
        keygen(self.client_key_path, comment="jarvis-tests")
        authorized = self.dir / "authorized_keys"
        authorized.write_text(Path(f"{self.client_key_path}.pub").read_text())
        authorized.chmod(0o644)
        self.home = self.dir / "home"
        self.home.mkdir()
        os.chown(self.home, self.uid, self.gid)
        self._new_host_key("ed25519")

    # --- what tests read

    @property
    def client_key(self) -> str:
        """The private key (OpenSSH format) the server's authorized_keys accepts."""
        return self.client_key_path.read_text()

    @property
    def client_key_public(self) -> str:
        return Path(f"{self.client_key_path}.pub").read_text().strip()

    @property
    def host_key_line(self) -> str:
        return Path(f"{self.host_key_path}.pub").read_text().strip()

    @property
    def host_fingerprint(self) -> str:
        return fingerprint(Path(f"{self.host_key_path}.pub"))

    @property
    def log(self) -> str:
        path = self.dir / "sshd.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def mark(self) -> int:
        """Where the log ends now; `log_since(mark)` is what came after."""
        return len(self.log)

    def log_since(self, mark: int, *, expect: str | None = None, timeout: float = 5) -> str:
        """The log after `mark`; with `expect`, wait until that text shows up
        (sshd writes a line a moment after the client has its answer)."""
        deadline = time.monotonic() + timeout
        while True:
            text = self.log[mark:]
            if expect is None or expect in text or time.monotonic() > deadline:
                return text
            time.sleep(0.02)

    def workdir(self, name: str) -> Path:
        """A fresh directory the test account owns, for file and cwd tests."""
        path = self.home / f"{name}-{secrets.token_hex(4)}"
        path.mkdir()
        os.chown(path, self.uid, self.gid)
        return path

    def put(self, path: Path, content: str | bytes, *, mode: int = 0o644) -> Path:
        """A file the test account owns (the tests run as root)."""
        if isinstance(content, str):
            content = content.encode()
        path.write_bytes(content)
        path.chmod(mode)
        os.chown(path, self.uid, self.gid)
        return path

    # --- lifecycle

    def _new_host_key(self, kind: str) -> None:
        keygen(self.host_key_path, kind=kind)

    def _write_config(self) -> Path:
        config = self.dir / "sshd_config"
        config.write_text(
            "\n".join(
                [
                    f"Port {self.port}",
                    "ListenAddress 127.0.0.1",
                    f"HostKey {self.host_key_path}",
                    "PidFile none",
                    f"AuthorizedKeysFile {self.dir / 'authorized_keys'}",
                    f"AllowUsers {TEST_USER}",
                    "PermitRootLogin no",
                    # No PAM: a container has no PAM session setup worth the
                    # noise, and sshd then checks /etc/shadow itself.
                    "UsePAM no",
                    "PubkeyAuthentication yes",
                    "PasswordAuthentication yes",
                    "KbdInteractiveAuthentication no",
                    "PermitEmptyPasswords no",
                    # The key files live under /tmp (world-writable), which
                    # StrictModes would refuse.
                    "StrictModes no",
                    f"Subsystem sftp {SFTP_SERVER}",
                    "UseDNS no",
                    "PrintMotd no",
                    "PrintLastLog no",
                    "X11Forwarding no",
                    "AllowAgentForwarding no",
                    "AllowTcpForwarding no",
                    "PermitTunnel no",
                    "MaxStartups 100",
                    "MaxSessions 50",
                    "LoginGraceTime 20",
                    "LogLevel VERBOSE",
                    "",
                ]
            )
        )
        return config

    def start(self) -> FakeSSHD:
        config = self._write_config()
        log = open(self.dir / "sshd.log", "ab")  # noqa: SIM115 - sshd holds it
        try:
            self.process = subprocess.Popen(
                [SSHD, "-D", "-e", "-f", str(config)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"},
                # The remote host is another machine with a usual umask, not
                # this process's 077 (jarvis_site.settings).
                umask=0o022,
            )
        finally:
            log.close()
        self._wait_listening()
        return self

    def _wait_listening(self, timeout: float = 10) -> None:
        assert self.process is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise SSHDUnavailable(f"sshd exited ({self.process.returncode}):\n{self.log}")
            try:
                with socket.create_connection((self.host, self.port), timeout=0.5) as sock:
                    # The banner proves it is our sshd answering, not a
                    # process that grabbed the port in between.
                    sock.settimeout(5)
                    if sock.recv(64).startswith(b"SSH-2.0-OpenSSH"):
                        return
            except OSError:
                time.sleep(0.02)
        raise SSHDUnavailable(f"sshd did not listen on {self.port} within {timeout}s:\n{self.log}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def restart(self, *, new_host_key: bool = False, key_type: str = "ed25519") -> FakeSSHD:
        """Stop and start on the same port, with a newly generated host key when asked."""
        self.stop()
        if new_host_key:
            self._new_host_key(key_type)
        return self.start()

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> FakeSSHD:
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.close()


def processes_matching(text: str, *, user: str = TEST_USER) -> list[int]:
    """Pids of the account's processes whose command line contains `text`,
    read from /proc (procps may be missing on a minimal machine)."""
    uid = pwd.getpwnam(user).pw_uid
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if entry.stat().st_uid != uid:
                continue
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue  # it ended while we looked
        if text in cmdline:
            found.append(int(entry.name))
    return found
