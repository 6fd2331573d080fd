"""asyncssh's in-process SSH server, for behaviour a real sshd will not show on
demand: a disk that fills up during an SFTP write. Runs in the test's own event
loop: `async with InProcessSSH(sftp=DiskFullSFTP) as server:`."""

from __future__ import annotations

import errno

import asyncssh

from apps.agents import ssh


class DiskFullSFTP(asyncssh.SFTPServer):
    """Every write fails the way a full disk fails (ENOSPC), which asyncssh's
    server reports with its own status code (FX_NO_SPACE_ON_FILESYSTEM)."""

    def write(self, file_obj, offset, data):
        raise OSError(errno.ENOSPC, "No space left on device")


class OpenSSHDiskFullSFTP(asyncssh.SFTPServer):
    """A full disk as OpenSSH's sftp-server reports it: SFTP v3 has no code for
    it, so the client gets a bare FX_FAILURE "Failure"."""

    def write(self, file_obj, offset, data):
        raise asyncssh.SFTPFailure("Failure")


class InProcessSSH:
    host = "127.0.0.1"
    username = "tester"

    def __init__(self, *, sftp: type[asyncssh.SFTPServer]) -> None:
        self._sftp = sftp
        self._host_key = asyncssh.generate_private_key("ssh-ed25519")
        self.client = ssh.generate_keypair()
        self.host_key_line = ssh.parse_host_key(self._host_key.export_public_key().decode()).line
        self._server: asyncssh.SSHAcceptor | None = None

    @property
    def port(self) -> int:
        assert self._server is not None
        return self._server.get_port()

    def target(self) -> ssh.Target:
        return ssh.Target(
            host=self.host,
            port=self.port,
            username=self.username,
            private_key=self.client.private_key,
            host_key=self.host_key_line,
        )

    async def __aenter__(self) -> InProcessSSH:
        self._server = await asyncssh.listen(
            self.host,
            0,
            server_host_keys=[self._host_key],
            authorized_client_keys=asyncssh.import_authorized_keys(self.client.public_key),
            sftp_factory=self._sftp,
            allow_scp=False,
        )
        return self

    async def __aexit__(self, *exc_info) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()
