"""An interactive shell on a pseudo-terminal: the far end of the terminal panel.

Bytes in, bytes out, nothing decoded: a read on the far side ends mid-character
often enough to matter, and the browser's terminal decodes statefully across
writes. Output arrives through a callback as the SSH layer receives it, so the
caller can fan it out without a reader loop of its own.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import asyncssh

from apps.agents.errors import ConnectionFailed
from apps.agents.ssh.connection import Connection

logger = logging.getLogger(__name__)

TERM_TYPE = "xterm-256color"
# The SSH channel's receive window: how much output may be on its way to us
# at once. The default (2 MiB) would let a `yes` run that far ahead of what
# anyone sees; a small window keeps what is queued upstream of the viewers,
# and so the delay behind a flood, short. bench/terminal_load.py measures it.
SHELL_WINDOW = 64 * 1024
SHELL_PACKET = 32 * 1024


class _ShellSession(asyncssh.SSHClientSession):
    def __init__(
        self,
        on_output: Callable[[bytes], None],
        on_exit: Callable[[int | None, str], None],
    ) -> None:
        self.on_output, self.on_exit = on_output, on_exit
        self.exit_status: int | None = None
        self.exit_signal: str | None = None

    def data_received(self, data: bytes, datatype: int | None) -> None:
        self.on_output(data)

    def exit_status_received(self, status: int) -> None:
        self.exit_status = status

    def exit_signal_received(self, signal: str, core_dumped: bool, msg: str, lang: str) -> None:
        self.exit_signal = signal

    def connection_lost(self, exc: Exception | None) -> None:
        if exc is not None:
            reason = f"the connection was lost: {getattr(exc, 'reason', None) or exc}"
        elif self.exit_signal:
            reason = f"the shell was ended by signal {self.exit_signal}"
        elif self.exit_status is not None:
            reason = f"the shell ended (exit status {self.exit_status})"
        else:
            reason = "the shell ended"
        self.on_exit(self.exit_status, reason)


class Shell:
    """A running shell. `write` sends keystrokes, `resize` the window size."""

    def __init__(self, channel: asyncssh.SSHClientChannel) -> None:
        self._channel = channel

    def write(self, data: bytes) -> None:
        if not self._channel.is_closing():
            self._channel.write(data)

    @property
    def unsent(self) -> int:
        """Input bytes the server has not taken yet (it reads what it is typed slowly)."""
        return self._channel.get_write_buffer_size()

    @property
    def held(self) -> int:
        """Output asyncssh has received and holds back while paused (a private
        attribute of asyncssh's channel: read for tests and figures only)."""
        return sum(len(data) for data, _type in getattr(self._channel, "_recv_buf", []))

    def pause(self) -> None:
        """Take no more output for now: the SSH window closes, sshd stops
        reading the PTY, and the program's writes wait (as in a terminal
        nobody scrolls)."""
        self._channel.pause_reading()

    def resume(self) -> None:
        self._channel.resume_reading()

    def resize(self, cols: int, rows: int) -> None:
        if not self._channel.is_closing():
            self._channel.change_terminal_size(cols, rows)

    def close(self) -> None:
        self._channel.close()

    async def wait_closed(self) -> None:
        await self._channel.wait_closed()


async def open_shell(
    conn: Connection,
    command: str,
    *,
    cols: int,
    rows: int,
    on_output: Callable[[bytes], None],
    on_exit: Callable[[int | None, str], None],
    window: int | None = None,
) -> Shell:
    """Run `command` (the exec request string: see apps.agents.terminal.marks)
    on a new PTY of `cols` x `rows`. `on_output(bytes)` gets the output as it
    arrives; `on_exit(status, reason)` once, when the shell or the connection ends."""
    try:
        channel, _session = await conn.create_session(
            lambda: _ShellSession(on_output, on_exit),
            command,
            request_pty="force",
            term_type=TERM_TYPE,
            term_size=(cols, rows),
            encoding=None,
            window=window or SHELL_WINDOW,
            max_pktsize=SHELL_PACKET,
        )
    except (OSError, asyncssh.Error) as exc:
        raise ConnectionFailed(f"could not start a shell: {exc}") from None
    return Shell(channel)
