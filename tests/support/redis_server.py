"""Debian's redis-server on a loopback port (installed by `make test`,
TEST_DEBS), for the tests of a channel layer several processes share."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.support.processes import free_port, wait_for_port


class Redis:
    """Debian's redis-server on a loopback port, which a test can stop and start again."""

    def __init__(self, password: str = "") -> None:
        """`password`: asked of every client, as a Redis reached over a
        network would (the URL carries it)."""
        self.binary = shutil.which("redis-server")
        assert self.binary, "redis-server is installed by `make test` (TEST_DEBS)"
        self.port = free_port()
        self.password = password
        auth = f":{password}@" if password else ""
        self.url = f"redis://{auth}127.0.0.1:{self.port}/0"
        self.process = None

    def start(self) -> None:
        auth = ["--requirepass", self.password] if self.password else []
        self.process = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", *auth],
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
        wait_for_port(self.port, self.process)

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=10)
            self.process = None


@pytest.fixture
def redis():
    server = Redis()
    server.start()
    yield server
    server.stop()
