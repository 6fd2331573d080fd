"""Commands: a fresh shell per call, cwd a parameter, output capped, timeouts kill."""

from __future__ import annotations

import asyncio
import logging

import asyncssh

from apps.agents.errors import CommandResult, CommandTimeout, ConnectionFailed, SSHError
from apps.agents.ssh.connection import Connection

logger = logging.getLogger(__name__)

COMMAND_TIMEOUT = 120.0
MAX_OUTPUT = 64 * 1024  # bytes kept per stream (half from the start, half from the end)
_CHUNK = 64 * 1024


# The SSH exec request carries one string that the remote login shell parses;
# there is no argv form. So that string is fixed code plus quoted literals:
# the runner script below gets the directory and the command as positional
# arguments ($1, $2) and never splices either into code. The command then
# runs in a fresh bash (sh where there is no bash): people and models write
# bash, and `source`, `[[ ]]` and pipefail should work.
_RUNNER = (
    'if [ -n "$1" ]; then cd -- "$1" || exit 126; fi; '
    'if command -v bash >/dev/null 2>&1; then exec bash -c "$2"; fi; '
    'exec sh -c "$2"'
)


def quote(text: str) -> str:
    """Quote for the remote login shell: sh, bash, dash, zsh, ksh and fish.
    Single quotes, with ' and \\ written outside them (fish reads \\ inside
    single quotes; POSIX shells do not, and "\\\\" means \\ to both)."""
    if "\0" in text:
        raise ValueError("a shell argument cannot contain a NUL byte")
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError("a shell argument must be valid Unicode text") from None
    return "'" + text.replace("'", "'\"'\"'").replace("\\", "'\"\\\\\"'") + "'"


def command_line(command: str, cwd: str | None = None) -> str:
    """The exec request for `command` run in `cwd` (None: the login directory)."""
    return f"exec /bin/sh -c {quote(_RUNNER)} jarvis {quote(cwd or '')} {quote(command)}"


class _Capped:
    """Keeps the first and the last `limit // 2` bytes of a stream, counts the rest."""

    def __init__(self, limit: int) -> None:
        self.head_limit = limit - limit // 2
        self.tail_limit = limit // 2
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data and self.tail_limit:
            self.tail += data
            if len(self.tail) > 2 * self.tail_limit:  # trim now and then, not per chunk
                del self.tail[: -self.tail_limit]

    def result(self) -> tuple[str, int]:
        tail = bytes(self.tail[-self.tail_limit :]) if self.tail_limit else b""
        cut = self.total - len(self.head) - len(tail)
        head_text = bytes(self.head).decode("utf-8", errors="replace")
        if not cut:
            return head_text + tail.decode("utf-8", errors="replace"), 0
        note = f"\n[… {cut:,} bytes cut: the output was {self.total:,} bytes …]\n"
        return head_text + note + tail.decode("utf-8", errors="replace"), cut


def _command_result(
    process: asyncssh.SSHClientProcess, out: _Capped, err: _Capped
) -> CommandResult:
    stdout, stdout_cut = out.result()
    stderr, stderr_cut = err.result()
    exit_signal = process.exit_signal
    return CommandResult(
        exit_code=None if exit_signal else process.exit_status,
        signal=exit_signal[0] if exit_signal else None,
        stdout=stdout,
        stderr=stderr,
        stdout_bytes=out.total,
        stderr_bytes=err.total,
        stdout_cut=stdout_cut,
        stderr_cut=stderr_cut,
    )


async def _pump(reader: asyncssh.SSHReader, sink: _Capped) -> None:
    while chunk := await reader.read(_CHUNK):
        sink.add(chunk)


async def _kill(process: asyncssh.SSHClientProcess) -> None:
    # OpenSSH delivers a signal request with killpg() on the session's process
    # group, so the shell and what it started go together; closing the channel
    # alone would leave a `sleep` running.
    try:
        process.send_signal("KILL")
    except (OSError, asyncssh.Error):
        logger.warning("could not send KILL to a timed-out remote command", exc_info=True)
    process.close()
    try:
        await asyncio.wait_for(process.wait_closed(), timeout=5)
    except TimeoutError:
        logger.warning("a killed remote command's channel did not close within 5 s")


async def run_command(
    conn: Connection,
    command: str,
    *,
    cwd: str | None = None,
    timeout: float = COMMAND_TIMEOUT,
    max_output: int = MAX_OUTPUT,
) -> CommandResult:
    """Run `command` in a fresh shell in `cwd`, stdin closed. Output past
    `max_output` bytes per stream is counted and dropped as it arrives (a
    50 MB output costs no more memory than a short one). Past `timeout` the
    remote process group is killed and CommandTimeout carries what it printed."""
    try:
        line = command_line(command, cwd)
    except ValueError as exc:
        raise SSHError(str(exc)) from None
    out, err = _Capped(max_output), _Capped(max_output)
    try:
        process = await conn.create_process(line, encoding=None, request_pty=False)
    except (OSError, asyncssh.Error) as exc:
        raise ConnectionFailed(f"could not start the command: {exc}") from None
    try:
        process.stdin.write_eof()
        async with asyncio.timeout(timeout):
            await asyncio.gather(_pump(process.stdout, out), _pump(process.stderr, err))
            await process.wait_closed()
    except TimeoutError:
        await _kill(process)
        raise CommandTimeout(timeout=timeout, partial=_command_result(process, out, err)) from None
    except (OSError, asyncssh.Error) as exc:
        process.close()
        raise ConnectionFailed(f"the connection broke while the command ran: {exc}") from None
    return _command_result(process, out, err)
