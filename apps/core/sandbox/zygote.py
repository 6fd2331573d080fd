"""The sandbox zygote: a clean process that has imported Django and the task
modules once, and forks one short-lived child per request.

Run as `python -m apps.core.sandbox.zygote CONTROL_FD MODULE...` by
apps.core.sandbox.client, never by hand. It is started with exec, not forked
from the worker or the web process, so it holds none of their database
connections, threads or locks; it never opens the database itself (any
attempt raises), and neither do its children.

Each child: dies with the zygote (PR_SET_PDEATHSIG), sets its address-space
and CPU limits before it reads the request's data, runs one task, writes its
JSON result and exits. The zygote kills it at its wall-clock deadline or when
the parent asks (cancel), reaps it, and reports how it ended on the child's
result socket. Forking from a warm zygote costs a few milliseconds of the
parent's time instead of the seconds a fresh interpreter needs to import
Django and PyMuPDF.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib
import json
import os
import resource
import select
import signal
import socket
import sys
import time
import traceback
from dataclasses import dataclass

import django
from django.db import connections

from apps.core.sandbox import protocol
from apps.core.sandbox.tasks import TASKS

PR_SET_PDEATHSIG = 1
CONTROL_MAX = 4096


@dataclass
class _Child:
    id: int
    pid: int
    result: socket.socket
    deadline: float
    timed_out: bool = False
    cancelled: bool = False


def main() -> None:
    control_fd = int(sys.argv[1])
    modules = sys.argv[2:]
    # The parent stops the zygote by closing the control socket; a Ctrl-C in
    # the terminal is the parent's to handle.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "jarvis_site.settings")
    os.environ["JARVIS_SANDBOX_ZYGOTE"] = "1"  # apps.core.apps: load only what children need
    django.setup()
    _refuse_database()
    for name in modules:
        importlib.import_module(name)
    control = socket.socket(fileno=control_fd)
    try:
        control.sendall(b"ready")
    except OSError:
        return  # the parent stopped while this one started: nothing to serve
    Zygote(control).serve()


def _refuse_database() -> None:
    """No database from here on: a parser has no business there, and a
    connection opened in the zygote would be shared by every child it forks."""

    def refuse(*args, **kwargs):
        raise RuntimeError("the sandbox never opens the database")

    for alias in connections:
        connections[alias].connect = refuse


class Zygote:
    def __init__(self, control: socket.socket) -> None:
        self.control = control
        self.children: dict[int, _Child] = {}  # by pid
        # Exit reports a full socket would not take yet: (socket, frame, give up at).
        self.unsent: list[tuple[socket.socket, bytes, float]] = []
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_w, False)
        signal.set_wakeup_fd(self.wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)

    def serve(self) -> None:
        while True:
            timeout = None
            if self.children:
                nearest = min(c.deadline for c in self.children.values())
                timeout = max(0.0, nearest - time.monotonic())
            if self.unsent:
                timeout = min(timeout if timeout is not None else 1.0, 1.0)
            waiting = [sock for sock, _frame, _until in self.unsent]
            try:
                readable, writable, _ = select.select(
                    [self.control, self.wake_r], waiting, [], timeout
                )
            except InterruptedError:
                readable, writable = [], []
            self._send_unsent(writable)
            if self.wake_r in readable:
                with contextlib.suppress(BlockingIOError):
                    os.read(self.wake_r, 4096)
            if self.control in readable and not self._command():
                break
            self._reap()
            self._enforce_deadlines()
        for child in self.children.values():
            _kill(child.pid)

    def _command(self) -> bool:
        try:
            message, fds, _flags, _addr = socket.recv_fds(self.control, CONTROL_MAX, 2)
        except OSError:
            return False
        if not message:
            return False  # the parent is gone
        command = json.loads(message)
        if command["op"] == "run":
            request_fd, result_fd = fds
            self._fork(command, request_fd, result_fd)
        elif command["op"] == "kill":
            for child in self.children.values():
                if child.id == command["id"]:
                    child.cancelled = True
                    _kill(child.pid)
            for fd in fds:
                os.close(fd)
        return True

    def _fork(self, command: dict, request_fd: int, result_fd: int) -> None:
        pid = os.fork()
        if pid == 0:
            _child_main(request_fd, result_fd)
        # Its own process group (set on both sides, whichever runs first), so
        # a kill also takes any program the task started (an OCR engine).
        with contextlib.suppress(OSError):
            os.setpgid(pid, pid)
        os.close(request_fd)
        result = socket.socket(fileno=result_fd)
        deadline = time.monotonic() + float(command["wall"])
        self.children[pid] = _Child(command["id"], pid, result, deadline)

    def _reap(self) -> None:
        while self.children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            child = self.children.pop(pid, None)
            if child is not None:
                self._report(child, status)

    def _enforce_deadlines(self) -> None:
        now = time.monotonic()
        for child in self.children.values():
            if not child.timed_out and now >= child.deadline:
                child.timed_out = True
                child.deadline = now + 3600  # reaped on the next SIGCHLD
                _kill(child.pid)

    def _report(self, child: _Child, status: int) -> None:
        ended = {
            "exitcode": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
            "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
            "timed_out": child.timed_out,
            "cancelled": child.cancelled,
        }
        frame = protocol.json_frame(protocol.EXIT, ended)
        self.unsent.append((child.result, frame, time.monotonic() + 60))
        self._send_unsent([child.result])

    def _send_unsent(self, writable: list) -> None:
        """Deliver exit reports. Never blocking (a parent that stopped reading
        must not stall the zygote): a report that does not fit waits until its
        socket is writable, and is dropped after a minute."""
        keep = []
        for sock, frame, until in self.unsent:
            if sock in writable:
                try:
                    sent = sock.send(frame, socket.MSG_DONTWAIT)
                except BlockingIOError:
                    sent = 0
                except OSError:
                    sock.close()
                    continue
                frame = frame[sent:]
                if not frame:
                    sock.close()
                    continue
            if time.monotonic() > until:
                sock.close()
                continue
            keep.append((sock, frame, until))
        self.unsent = keep


def _kill(pid: int) -> None:
    """The child and everything in its process group. Only ever called for a
    child not yet reaped, so the pid cannot have been reused."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _child_main(request_fd: int, result_fd: int) -> None:
    """The forked child. Never returns: os._exit skips the zygote's cleanup."""
    code = 0
    try:
        with contextlib.suppress(OSError):
            os.setpgid(0, 0)
        _die_with_parent()
        signal.set_wakeup_fd(-1)
        _close_all_but(request_fd, result_fd)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # subprocesses a task runs are waited for
        result = socket.socket(fileno=result_fd)
        _run(request_fd, result)
    except BaseException:  # the child reports what it can; it must never fall back into the zygote
        code = 70
        with contextlib.suppress(BaseException):
            traceback.print_exc()
    os._exit(code)


def _run(request_fd: int, result: socket.socket) -> None:
    try:
        with os.fdopen(request_fd, "rb") as handle:
            header = protocol.read_request_header(handle)
            _apply_limits(header["limits"])
            blobs = protocol.read_blobs(handle, header["blob_sizes"])
        value, out_blobs = TASKS[header["task"]](header["params"], blobs)
    except MemoryError:
        blobs = None  # let go of what there is, to have room to answer
        result.sendall(protocol.json_frame(protocol.ERROR, {"kind": "memory"}))
        return
    except Exception as exc:  # reported to the parent, which decides what it means
        message = f"{type(exc).__name__}: {exc}"[:2000]
        result.sendall(protocol.json_frame(protocol.ERROR, {"kind": "error", "message": message}))
        return
    result.sendall(protocol.json_frame(protocol.RESULT, value))
    for blob in out_blobs:
        result.sendall(protocol.frame(protocol.BLOB, blob))


def _close_all_but(*keep: int) -> None:
    """Only stdin/stdout/stderr and the request's two files stay open: not the
    control socket, not other children's result sockets (a child could forge
    their answers), nothing a library opened in the zygote."""
    try:
        names = os.listdir("/proc/self/fd")
    except OSError:
        names = [str(fd) for fd in range(3, 1024)]
    for name in names:
        fd = int(name)
        if fd > 2 and fd not in keep:
            with contextlib.suppress(OSError):
                os.close(fd)


def _die_with_parent() -> None:
    parent = os.getppid()
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the zygote died before prctl took effect
        os._exit(71)


def _apply_limits(limits: dict) -> None:
    """CPU seconds (SIGXCPU at the soft limit, SIGKILL a little later) and an
    address space of what the child already maps plus the task's allowance."""
    cpu = int(limits["cpu_seconds"])
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5))
    baseline = _address_space_bytes()
    if baseline is not None:
        allowance = int(limits["memory_mb"]) * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (baseline + allowance, baseline + allowance))


def _address_space_bytes() -> int | None:
    try:
        with open("/proc/self/statm") as handle:
            pages = int(handle.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None  # not Linux: the wall-clock and CPU limits still hold
    return pages * os.sysconf("SC_PAGE_SIZE")


if __name__ == "__main__":
    main()
