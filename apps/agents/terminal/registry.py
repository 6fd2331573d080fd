"""Every open terminal of this web process, one per chat, and the reaper.

Terminals are keyed on the chat and outlive the socket: a reload is the same
as a second tab, and closing the panel detaches, never closes (a build running
behind a shut panel is what the lifetime is for). What ends one: the shell
exiting, the idle reaper (nobody attached and nothing typed for
TERMINAL_IDLE_SECONDS), deleting the chat, changing or deleting its SSH
profile or forgetting its host key, its owner losing the right to use it, or
a restart. Unlike a chat reply nothing here ends by itself, so a reaper task
sweeps.

Each web process holds its own terminals (a socket stays on the process it
reached; with several processes nginx sends a chat's terminal sockets to one
of them, docs/deploy.md), so this registry is a dict of this process's only.
Whatever ends a terminal must therefore reach the process that holds it, and
a Django signal reaches only the process that saved: the access watch does
that. Every TERMINAL_ACCESS_CHECK_SECONDS each open terminal is held against
the database as saved now (spec.ended_because): its chat and profile still
there, the profile's connection key still the one it started with, and its
owner still allowed (apps.agents.access). So an edit, a delete, a permission
or a share taken away, from any process, admin or a command, ends the shell
within seconds, with the words the panel would show had the edit been made
here; the signals (apps.agents.signals) only make that immediate in the
process that served the edit. Polling rather than a channel-layer message:
it needs no shared layer (the in-memory default reaches no other process)
and nothing is lost while Redis is away or when an edit comes from a queryset
update that fires no signal; it costs one small query per open terminal per
interval. Django signals may fire in a worker thread (sync views run in
daphne's thread pool): close_where reaches the loop with call_soon_threadsafe.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

from asgiref.sync import sync_to_async
from django.conf import settings

from apps.agents.terminal.session import TerminalSession, TerminalSpec
from apps.agents.terminal.spec import ended_because

logger = logging.getLogger(__name__)


class Terminals:
    def __init__(self) -> None:
        self.sessions: dict[int, TerminalSession] = {}
        self._starting: dict[int, asyncio.Task] = {}
        self._reaper: asyncio.Task | None = None
        self._watch: asyncio.Task | None = None

    async def session_for(
        self, spec: TerminalSpec, size: tuple[int, int] | None
    ) -> TerminalSession:
        """The chat's running terminal, or a new one started with `spec`.
        Two tabs arriving at once share one start. A terminal whose connection
        details have changed since it started is closed and replaced.
        SSHError when starting fails."""
        loop = asyncio.get_running_loop()
        current = self.sessions.get(spec.chat_id)
        if current is not None and (current.loop is not loop or current.closed):
            self.sessions.pop(spec.chat_id, None)  # a loop of a finished test, or ended
            current = None
        if current is not None and current.spec.connection_key != spec.connection_key:
            await current.close("the SSH profile changed; a new shell was started")
            current = None
        if current is not None:
            return current
        starting = self._starting.get(spec.chat_id)
        if starting is None or starting.get_loop() is not loop:
            starting = loop.create_task(self._start(spec, size))
            self._starting[spec.chat_id] = starting
        return await asyncio.shield(starting)

    async def _start(self, spec: TerminalSpec, size: tuple[int, int] | None) -> TerminalSession:
        try:
            session = TerminalSession(spec, scrollback_bytes=settings.TERMINAL_SCROLLBACK_BYTES)
            await session.start(size, self._forget)
            self.sessions[spec.chat_id] = session
            self._ensure_reaper()
            self._ensure_watch()
            return session
        finally:
            self._starting.pop(spec.chat_id, None)

    def _forget(self, session: TerminalSession) -> None:
        if self.sessions.get(session.chat_id) is session:
            del self.sessions[session.chat_id]

    # --- the reaper

    def _ensure_reaper(self) -> None:
        if self._reaper is None or self._reaper.done():
            self._reaper = asyncio.get_running_loop().create_task(
                self._reap(), name="terminal-reaper"
            )

    async def _reap(self) -> None:
        idle = settings.TERMINAL_IDLE_SECONDS
        interval = max(1.0, min(60.0, idle / 4))
        while self.sessions:
            await asyncio.sleep(interval)
            await self.reap_once()

    async def reap_once(self, now: float | None = None) -> list[int]:
        """Close every terminal idle for longer than TERMINAL_IDLE_SECONDS."""
        now = time.monotonic() if now is None else now
        idle = settings.TERMINAL_IDLE_SECONDS
        reaped = [
            s for s in list(self.sessions.values()) if s.idle_for(now) > idle and not s.closed
        ]
        for session in reaped:
            minutes = idle / 60
            await session.close(f"closed after {minutes:g} minutes with nobody watching")
        return [s.chat_id for s in reaped]

    # --- the access watch

    def _ensure_watch(self) -> None:
        if self._watch is None or self._watch.done():
            self._watch = asyncio.get_running_loop().create_task(
                self._watch_access(), name="terminal-access-watch"
            )

    async def _watch_access(self) -> None:
        while self.sessions:
            await asyncio.sleep(settings.TERMINAL_ACCESS_CHECK_SECONDS)
            try:
                await self.check_access_once()
            except Exception:  # the next sweep tries again; the log says why
                logger.exception("the terminal access check failed")

    async def check_access_once(self) -> list[int]:
        """Close every terminal of this loop that may not go on as saved now
        (spec.ended_because: its chat or profile deleted, the profile's
        connection changed, its owner's right gone); the panel shows why."""
        loop = asyncio.get_running_loop()
        closed = []
        for session in list(self.sessions.values()):
            if session.closed or session.loop is not loop:
                continue
            reason = await sync_to_async(ended_because, thread_sensitive=False)(session.spec)
            if reason and not session.closed:  # a signal may have closed it meanwhile
                await session.close(reason)
                closed.append(session.chat_id)
        return closed

    # --- closing from elsewhere (signals, shutdown, tests)

    def close_where(
        self,
        reason: str,
        *,
        chat_id: int | None = None,
        profile_id: int | None = None,
        unless_key: str | None = None,
    ) -> None:
        """Close the terminals of a chat or of a profile (with `unless_key`:
        those started with another connection key). Safe from any thread."""
        for session in list(self.sessions.values()):
            if chat_id is not None and session.chat_id != chat_id:
                continue
            if profile_id is not None and session.spec.profile_id != profile_id:
                continue
            if unless_key is not None and session.spec.connection_key == unless_key:
                continue
            if session.loop.is_closed():
                self.sessions.pop(session.chat_id, None)
                continue
            session.loop.call_soon_threadsafe(lambda s=session: s.loop.create_task(s.close(reason)))

    async def close_all(self, reason: str = "the server is stopping") -> None:
        """Close every terminal on this loop (tests; shutdown)."""
        loop = asyncio.get_running_loop()
        for session in list(self.sessions.values()):
            if session.loop is loop:
                await session.close(reason)
            self.sessions.pop(session.chat_id, None)
        for name in ("_reaper", "_watch"):
            task = getattr(self, name)
            if task is not None and task.get_loop() is loop:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
                setattr(self, name, None)


TERMINALS = Terminals()
