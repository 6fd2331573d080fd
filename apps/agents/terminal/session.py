"""One chat's terminal: a shell on a PTY and the browser tabs watching it.

A `TerminalSession` owns the SSH connection and the shell, a bounded
scrollback (so a reload or a dropped viewer comes back to the same screen) and
its viewers. Output is fanned out as it arrives: each viewer has a bounded
queue, and one that falls QUEUE_BYTES behind is dropped (its socket is closed
and it reconnects with the scrollback, which costs it nothing: the scrollback
is the state). Nothing buffers without bound: "yes" is one word to type.

Pace. The shell's output is taken as fast as the *fastest* viewer shows it:
when even the most caught-up viewer has PAUSE_BYTES queued, reading pauses
(the SSH window closes, sshd stops reading the PTY, the program's writes
wait, as in any terminal) and resumes when that viewer has caught up. So a
flood neither outruns every tab (which would all be dropped over and over)
nor waits for a slow one: a slower viewer only falls behind the fastest, and
is dropped. A pause lasts at most MAX_PAUSE: viewers that took nothing in that
time (a tab in the background, a stalled network) are dropped and the shell
runs on. With nobody watching, output is never paused (a build behind a
closed panel keeps running) and only the scrollback keeps it.

Acknowledgements. A websocket send does not wait for the browser (daphne
buffers whatever is sent), so viewers acknowledge what they have shown (`ack`
with the total bytes); a viewer has at most WINDOW bytes unacknowledged, and
beyond that its sender waits and its queue fills. Memory per viewer is
bounded by WINDOW + QUEUE_BYTES, per session by the scrollback and the SSH
channel window (apps/agents/ssh/shell.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from apps.agents import ssh
from apps.agents.terminal.marks import MARK, shell_command

logger = logging.getLogger(__name__)

QUEUE_BYTES = 1024 * 1024  # output waiting for one viewer before it is dropped
WINDOW = 128 * 1024  # output sent to one viewer and not acknowledged yet
PAUSE_BYTES = 32 * 1024  # the fastest viewer has this much queued: stop reading
MAX_PAUSE = 5.0  # seconds a pause may last before the viewers holding it are dropped
FRAME = 32 * 1024  # the most output sent in one websocket message
MAX_INPUT_PENDING = 256 * 1024  # typed/pasted input the server has not taken yet
DEFAULT_SIZE = (80, 24)
MAX_COLS, MAX_ROWS = 500, 200


def clamp_size(cols: object, rows: object) -> tuple[int, int] | None:
    try:
        cols, rows = int(cols), int(rows)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    if cols < 2 or rows < 2:
        return None
    return min(cols, MAX_COLS), min(rows, MAX_ROWS)


class Scrollback:
    """The last `limit` bytes of output, as chunks (no copy per write)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.chunks: deque[bytes] = deque()
        self.size = 0

    def add(self, data: bytes) -> None:
        self.chunks.append(data)
        self.size += len(data)
        while self.size - len(self.chunks[0]) >= self.limit:
            self.size -= len(self.chunks.popleft())

    def snapshot(self) -> bytes:
        data = b"".join(self.chunks)
        return data[-self.limit :]


Frame = bytes | dict  # bytes: terminal output; dict: a control message (sent as JSON)


class Viewer:
    """One browser tab's view of a session: a bounded queue and a sender that
    respects the tab's acknowledgements. `send` sends one frame on the socket;
    `on_drop` is called once if the viewer falls too far behind."""

    def __init__(
        self,
        *,
        send: Callable[[Frame], Awaitable[None]],
        on_drop: Callable[[], None],
        size: tuple[int, int] | None = None,
    ) -> None:
        self.send, self.on_drop = send, on_drop
        self.on_drained: Callable[[], None] | None = None  # set by the session
        self.size = size
        self.queue: deque[Frame] = deque()
        self.queued = 0  # output bytes in the queue
        self.sent = 0  # output bytes sent
        self.acked = 0  # output bytes the tab says it has shown
        self.dropped = False
        self._wake = asyncio.Event()
        self._task: asyncio.Task | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="terminal-viewer")

    def offer(self, data: bytes) -> bool:
        """Queue output; False (and nothing queued) when the viewer is too far behind."""
        if self.dropped:
            return False
        if self.queued + len(data) > QUEUE_BYTES:
            return False
        self.queue.append(data)
        self.queued += len(data)
        self._wake.set()
        return True

    def notify(self, message: dict) -> None:
        """A control message, in order with the output (small; not counted)."""
        self.queue.append(message)
        self._wake.set()

    def preload(self, data: bytes) -> None:
        """The scrollback a new viewer starts from: queued whatever its size
        (it is bounded by the scrollback), and acknowledged like any output."""
        for start in range(0, len(data), FRAME):
            chunk = data[start : start + FRAME]
            self.queue.append(chunk)
            self.queued += len(chunk)
        self._wake.set()

    def ack(self, total: object) -> None:
        try:
            total = int(total)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return
        if self.acked < total <= self.sent:  # a forged or stale ack changes nothing
            self.acked = total
            self._wake.set()

    def drop(self) -> None:
        if not self.dropped:
            self.dropped = True
            self.queue.clear()
            self.queued = 0
            self.on_drop()

    def _next_frame(self) -> Frame | None:
        if not self.queue or self.dropped:
            return None
        if isinstance(self.queue[0], dict):
            return self.queue.popleft()
        if self.sent - self.acked >= WINDOW:
            return None  # wait for the tab to catch up
        parts: list[bytes] = []
        size = 0
        # Coalesce queued output into one message: fewer, larger frames cost
        # the server and the browser less than many small ones.
        while self.queue and isinstance(self.queue[0], bytes) and size < FRAME:
            chunk = self.queue.popleft()
            parts.append(chunk)
            size += len(chunk)
        self.queued -= size
        self.sent += size
        if self.on_drained is not None and self.queued < PAUSE_BYTES // 2:
            self.on_drained()
        return b"".join(parts)

    async def _run(self) -> None:
        while True:
            frame = self._next_frame()
            if frame is None:
                self._wake.clear()
                await self._wake.wait()
                continue
            try:
                await self.send(frame)
            except Exception as exc:  # any failure here means the socket is gone
                # The tab closed while output was on its way (daphne refuses
                # to send on a closed socket); its disconnect detaches it.
                logger.info("terminal viewer stopped sending: %s", exc)
                return

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task


@dataclass(frozen=True)
class TerminalSpec:
    """What a chat's terminal connects to. `connection_key` changes whenever
    anything about the profile's connection does (host, port, user, secret,
    pinned key): a running terminal with another key is closed."""

    chat_id: int
    profile_id: int
    target: ssh.Target
    project_dir: str
    connection_key: str


class TerminalSession:
    def __init__(self, spec: TerminalSpec, *, scrollback_bytes: int) -> None:
        self.spec = spec
        self.chat_id = spec.chat_id
        # A new viewer starts with the whole scrollback queued: it must fit
        # well inside the queue, or the viewer would be dropped at once.
        self.scrollback = Scrollback(min(scrollback_bytes, QUEUE_BYTES // 2))
        self.viewers: list[Viewer] = []
        self.size = DEFAULT_SIZE
        self.last_activity = time.monotonic()
        self.marks_seen = False
        self.closed = False
        self.close_reason = ""
        self.loop = asyncio.get_running_loop()
        self._conn: ssh.Connection | None = None
        self._shell: ssh.Shell | None = None
        self._on_closed: Callable[[TerminalSession], None] | None = None
        self._tail = b""  # the end of the last chunk, to find a mark split across two
        self._paused = False
        self._resuming = False
        self._pause_timer: asyncio.TimerHandle | None = None

    async def start(
        self, size: tuple[int, int] | None, on_closed: Callable[[TerminalSession], None]
    ) -> None:
        """Connect and start the shell; SSHError when that fails (its message
        is safe to show)."""
        self.size = size or DEFAULT_SIZE
        self._on_closed = on_closed
        self._conn = await ssh.connect(self.spec.target)
        try:
            self._shell = await ssh.open_shell(
                self._conn,
                shell_command(self.spec.project_dir),
                cols=self.size[0],
                rows=self.size[1],
                on_output=self._output,
                on_exit=self._exited,
            )
        except BaseException:
            self._conn.close()
            raise
        logger.info(
            "terminal of chat %s started (%s@%s:%s)",
            self.chat_id, self.spec.target.username, self.spec.target.host, self.spec.target.port,
        )  # fmt: skip

    # --- output

    def _output(self, data: bytes) -> None:
        if self.closed:
            return
        self.scrollback.add(data)
        if not self.marks_seen:
            if MARK in self._tail + data[: len(MARK)] or MARK in data:
                self.marks_seen = True
            self._tail = data[-(len(MARK) - 1) :]
        for viewer in list(self.viewers):
            if not viewer.offer(data):
                self._drop(viewer)
        if not self._resuming and self._behind():
            self._pause()

    def _behind(self) -> bool:
        """Even the most caught-up viewer has PAUSE_BYTES waiting."""
        return bool(self.viewers) and min(v.queued for v in self.viewers) >= PAUSE_BYTES

    def _pause(self) -> None:
        if not self._paused and self._shell is not None:
            self._paused = True
            self._shell.pause()
            self._pause_timer = self.loop.call_later(MAX_PAUSE, self._pause_expired)

    def _pause_expired(self) -> None:
        self._pause_timer = None
        if not self._paused or self.closed:
            return
        for viewer in [v for v in self.viewers if v.queued >= PAUSE_BYTES // 2]:
            self._drop(viewer)  # each drop may resume reading
        self._maybe_resume()

    def _maybe_resume(self) -> None:
        if self._paused and (
            not self.viewers or min(v.queued for v in self.viewers) < PAUSE_BYTES // 2
        ):
            self._paused = False
            if self._pause_timer is not None:
                self._pause_timer.cancel()
                self._pause_timer = None
            if self._shell is None or self.closed:
                return
            # Resuming hands over everything asyncssh held back, and nothing
            # may pause it half way: asyncssh reopens the whole SSH window on
            # the first packet it hands over, counting the ones still held
            # as read, so pausing with some held would let sshd send a window
            # more each time and the held data would grow without bound.
            # Pause again, if need be, once it has all been handed over.
            self._resuming = True
            try:
                self._shell.resume()
            finally:
                self._resuming = False
            if self._behind():
                self._pause()

    def _drop(self, viewer: Viewer) -> None:
        logger.info("terminal of chat %s: a viewer fell behind and was dropped", self.chat_id)
        self.detach(viewer)
        viewer.drop()

    def _exited(self, status: int | None, reason: str) -> None:
        if self.closed:
            return
        self._finish(reason)

    def _finish(self, reason: str) -> None:
        self.closed = True
        if self._pause_timer is not None:
            self._pause_timer.cancel()
        self.close_reason = reason
        for viewer in self.viewers:
            viewer.notify({"type": "closed", "reason": reason})
        self.viewers = []
        if self._conn is not None:
            self._conn.close()
        if self._on_closed is not None:
            self._on_closed(self)
        logger.info("terminal of chat %s closed: %s", self.chat_id, reason)

    # --- viewers

    def attach(self, viewer: Viewer) -> bytes:
        """Add a viewer; returns the scrollback it starts from. Nothing can
        arrive in between (one event loop, no await here)."""
        self.viewers.append(viewer)
        viewer.on_drained = self._maybe_resume
        self.last_activity = time.monotonic()
        self._fit()
        return self.scrollback.snapshot()

    def detach(self, viewer: Viewer) -> None:
        if viewer in self.viewers:
            self.viewers.remove(viewer)
            viewer.on_drained = None
            self.last_activity = time.monotonic()
            self._fit()
            self._maybe_resume()

    def resize(self, viewer: Viewer, size: tuple[int, int]) -> None:
        viewer.size = size
        self._fit()

    def _fit(self) -> None:
        # One PTY for every tab: the smallest window decides, so nobody's
        # lines wrap wrongly. With nobody watching, the size stays as it was.
        sizes = [v.size for v in self.viewers if v.size]
        if not sizes or self._shell is None:
            return
        size = (min(s[0] for s in sizes), min(s[1] for s in sizes))
        if size != self.size:
            self.size = size
            self._shell.resize(*size)

    # --- input

    def write(self, data: bytes) -> bool:
        """Keystrokes from a person (the approval modes govern the model, not
        the keyboard: whoever types here could open the same shell with ssh).
        False when the server has not taken the last MAX_INPUT_PENDING bytes."""
        if self.closed or self._shell is None:
            return False
        if self._shell.unsent > MAX_INPUT_PENDING:
            return False
        self.last_activity = time.monotonic()
        self._shell.write(data)
        return True

    def idle_for(self, now: float) -> float:
        """Seconds with nobody watching and nothing typed (0 while watched)."""
        return 0.0 if self.viewers else now - self.last_activity

    async def close(self, reason: str) -> None:
        if self.closed:
            return
        if self._shell is not None:
            self._shell.close()
        self._finish(reason)
