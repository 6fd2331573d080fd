"""Running a registered task in a sandbox child, from any Jarvis process.

One zygote per process (the worker, the web process, a CLI command), started
on first use or by `sandbox_warm_up()`, and stopped with the process (its
control socket closes). Thread-safe: the worker's threads and the web
process's preview renders share it; each request has its own socket.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field

from django.conf import settings

from apps.core.sandbox import protocol
from apps.core.sandbox.tasks import task_modules

logger = logging.getLogger(__name__)

STARTUP_SECONDS = 120  # importing Django and PyMuPDF on a busy two-core box
POLL_SECONDS = 0.25  # how often a waiting caller checks whether it was cancelled
GRACE_SECONDS = 30  # past the child's deadline, a silent zygote is presumed dead
DEFAULT_MAX_RESULT_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True)
class ChildLimits:
    wall_seconds: float
    cpu_seconds: int
    memory_mb: int


@dataclass
class ChildOutcome:
    """What came back. `failure` is "" on success, else one of: timeout, cpu,
    memory, crashed, cancelled, error, oversized; `detail` says more."""

    value: dict | None = None
    blobs: list[bytes] = field(default_factory=list)
    failure: str = ""
    detail: str = ""

    @property
    def ok(self) -> bool:
        return not self.failure and self.value is not None


class SandboxUnavailable(RuntimeError):
    """The zygote could not be started."""


class _SendFailed(Exception):
    """The zygote did not take the request (it has exited)."""


class _Zygote:
    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        env = dict(os.environ)
        env.update(
            {
                # Not settings.SETTINGS_MODULE: under override_settings it is None.
                "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE")
                or settings.SETTINGS_MODULE
                or "jarvis_site.settings",
                # Numeric libraries must not start thread pools in a process that forks.
                "OPENBLAS_NUM_THREADS": "1",
                "OMP_NUM_THREADS": "1",
                "PYTHONPATH": os.pathsep.join(
                    [str(settings.BASE_DIR), *filter(None, [env.get("PYTHONPATH")])]
                ),
            }
        )
        argv = [sys.executable, "-m", "apps.core.sandbox.zygote", str(theirs.fileno())]
        self.process = subprocess.Popen(
            [*argv, *task_modules()],
            pass_fds=[theirs.fileno()],
            cwd=settings.BASE_DIR,
            env=env,
            stdin=subprocess.DEVNULL,
        )
        theirs.close()
        ours.settimeout(STARTUP_SECONDS)
        try:
            ready = ours.recv(16)
        except OSError:
            ready = b""
        if ready != b"ready":
            ours.close()
            self._terminate()
            raise SandboxUnavailable("the sandbox process did not start")
        ours.settimeout(None)
        self.control = ours
        self.send_lock = threading.Lock()
        self.ids = itertools.count(1)

    def alive(self) -> bool:
        return self.process.poll() is None

    def died(self) -> bool:
        """Whether the zygote has exited (a moment's grace: its sockets close
        as it exits, a little before the kernel reports it gone)."""
        try:
            self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            return False
        return True

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            self.control.close()
        self._terminate()

    def _terminate(self) -> None:
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def send(self, command: dict, fds: Sequence[int] = ()) -> None:
        with self.send_lock:
            socket.send_fds(self.control, [json.dumps(command).encode()], list(fds))

    def run(
        self,
        task: str,
        *,
        params: dict,
        blobs: Sequence[bytes],
        limits: ChildLimits,
        cancelled: Callable[[], bool] | None,
        max_result_bytes: int,
    ) -> ChildOutcome:
        request_id = next(self.ids)
        ours, theirs = socket.socketpair()
        with tempfile.TemporaryFile() as request:
            protocol.write_request(
                request, {"task": task, "params": params, "limits": asdict(limits)}, list(blobs)
            )
            request.seek(0)
            try:
                command = {"op": "run", "id": request_id, "wall": limits.wall_seconds}
                self.send(command, [request.fileno(), theirs.fileno()])
            except OSError as exc:
                ours.close()
                raise _SendFailed(str(exc)) from exc
            finally:
                theirs.close()
        with ours:
            return self._collect(ours, request_id, limits, cancelled, max_result_bytes)

    def _collect(self, sock, request_id, limits, cancelled, max_result_bytes) -> ChildOutcome:
        reader = protocol.FrameReader()
        outcome = ChildOutcome()
        error: dict | None = None
        ended: dict | None = None
        received = 0
        oversized = False
        give_up = time.monotonic() + limits.wall_seconds + GRACE_SECONDS
        sock.settimeout(POLL_SECONDS)
        while ended is None:
            try:
                data = sock.recv(1 << 20)
            except TimeoutError:
                if cancelled is not None and cancelled():
                    self.send({"op": "kill", "id": request_id})
                    cancelled = None  # asked once; the zygote reports the end
                if time.monotonic() > give_up:
                    logger.error("the sandbox stopped answering; restarting it")
                    self.stop()
                    return ChildOutcome(failure="crashed", detail="the sandbox stopped answering")
                continue
            if not data:
                break  # EOF without an exit report: the zygote itself died
            received += len(data)
            if received > max_result_bytes and not oversized:
                # Keep reading for the exit report, but keep nothing else.
                oversized = reader.keep_only_exit = True
                outcome = ChildOutcome()
                self.send({"op": "kill", "id": request_id})
            for kind, payload in reader.feed(data):
                if kind == protocol.RESULT:
                    outcome.value = json.loads(payload)
                elif kind == protocol.BLOB:
                    outcome.blobs.append(payload)
                elif kind == protocol.ERROR:
                    error = json.loads(payload)
                elif kind == protocol.EXIT:
                    ended = json.loads(payload)
        return _judge(outcome, error, ended, oversized)


ZYGOTE_DIED = "the sandbox process stopped"


def _judge(outcome: ChildOutcome, error: dict | None, ended: dict | None, oversized: bool):
    if oversized:
        return ChildOutcome(failure="oversized")
    if ended is None:
        return ChildOutcome(failure="crashed", detail=ZYGOTE_DIED)
    if ended.get("cancelled"):
        return ChildOutcome(failure="cancelled")
    if ended.get("timed_out"):
        return ChildOutcome(failure="timeout")
    if outcome.value is not None and ended.get("exitcode") == 0:
        return outcome
    if error is not None:
        if error.get("kind") == "memory":
            return ChildOutcome(failure="memory")
        return ChildOutcome(failure="error", detail=str(error.get("message", "")))
    number = ended.get("signal")
    if number == signal.SIGXCPU:
        return ChildOutcome(failure="cpu")
    if number is not None:
        return ChildOutcome(failure="crashed", detail=signal.Signals(number).name)
    return ChildOutcome(failure="crashed", detail=f"exit code {ended.get('exitcode')}")


_lock = threading.Lock()
_zygote: _Zygote | None = None


def _current() -> _Zygote:
    global _zygote
    with _lock:
        if _zygote is None or not _zygote.alive():
            _zygote = _Zygote()
        return _zygote


def sandbox_warm_up() -> None:
    """Start the zygote now, so the first request does not wait for it."""
    _current()


def sandbox_stop() -> None:
    global _zygote
    with _lock:
        if _zygote is not None:
            _zygote.stop()
            _zygote = None


def run_in_child(
    task: str,
    *,
    params: dict,
    blobs: Sequence[bytes] = (),
    limits: ChildLimits,
    cancelled: Callable[[], bool] | None = None,
    max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES,
) -> ChildOutcome:
    """Run the registered `task` in a fresh child with `limits`. Never raises
    for what the child did; SandboxUnavailable if no zygote can be started."""
    for attempt in (1, 2):
        zygote = _current()
        try:
            outcome = zygote.run(
                task,
                params=params,
                blobs=blobs,
                limits=limits,
                cancelled=cancelled,
                max_result_bytes=max_result_bytes,
            )
        except _SendFailed as exc:
            outcome = ChildOutcome(failure="crashed", detail=str(exc))
        if outcome.failure != "crashed" or not zygote.died():
            return outcome
        # The zygote itself went away (killed, out of memory), taking the child
        # with it: that says nothing about the task. Start a new one, once.
        logger.warning("the sandbox process stopped; starting a new one")
        _forget(zygote)
        if attempt == 2:
            raise SandboxUnavailable("the sandbox process keeps stopping")
    raise AssertionError("unreachable")


def _forget(zygote: _Zygote) -> None:
    global _zygote
    with _lock:
        if _zygote is zygote:
            zygote.stop()
            _zygote = None
