"""Start real Jarvis processes (daphne, the Huey consumer, manage.py) for tests.

They run against the test database file, so tests using them need
`django_db(transaction=True)`: rows must be committed for another process to
see them.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.db import connection

ROOT = Path(__file__).resolve().parents[2]


def child_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)  # children keep Django's async safety
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "tests.settings",
            "JARVIS_TEST_CHILD": "1",
            "JARVIS_DB_FILE": str(connection.settings_dict["NAME"]),
            "PYTHONUNBUFFERED": "1",
        }
    )
    env.update(extra)
    return env


def manage(*args: str, input: str | None = None, timeout: float = 120, **env: str):
    """Run `manage.py ARGS` against the test database; returns CompletedProcess."""
    return subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), *args],
        input=input,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=child_env(**env),
        cwd=ROOT,
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen, timeout: float = 90) -> None:
    # Generous: on a loaded 2-core machine a fresh daphne takes 15-40 s to import.
    # A server that never listens still fails, just later.
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"process exited with {process.returncode} before listening")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise TimeoutError(f"nothing listening on port {port} after {timeout}s")


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextmanager
def daphne_server(log: Path | None = None, **env: str) -> Iterator[str]:
    """A real daphne serving jarvis_site.asgi on a free port; yields its base
    URL. `log`: a file for its stdout and stderr (else they are the suite's)."""
    with contextlib.ExitStack() as files:
        out = files.enter_context(log.open("wb")) if log is not None else None
        yield from _daphne(out, env)


def _daphne(out, env: dict) -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "daphne",
            "-b",
            "127.0.0.1",
            "-p",
            str(port),
            "jarvis_site.asgi:application",
        ],
        env=child_env(JARVIS_ALLOWED_HOSTS="127.0.0.1,localhost", **env),
        cwd=ROOT,
        stdout=out,
        stderr=subprocess.STDOUT if out is not None else None,
    )
    try:
        wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}"
    finally:
        _stop(process)


@contextmanager
def huey_consumer(*extra_args: str, **env: str) -> Iterator[subprocess.Popen]:
    """A real consumer, started as production starts it, on the test database and Huey file."""
    from apps.core.jobs import WORKER_COMMAND

    process = subprocess.Popen(
        [sys.executable, str(ROOT / "manage.py"), *WORKER_COMMAND, "--workers", "2", *extra_args],
        env=child_env(JARVIS_TEST_HUEY_IMMEDIATE="0", **env),
        cwd=ROOT,
    )
    try:
        yield process
    finally:
        _stop(process)


def wait_until(predicate, timeout: float = 30, interval: float = 0.1, process=None):
    """Poll `predicate` until it is truthy; fail early if `process` has died."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"process exited with {process.returncode} while waiting")
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise TimeoutError(f"condition not met within {timeout}s")
