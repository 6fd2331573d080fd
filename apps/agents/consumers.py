"""The terminal socket, ws/terminal/<chat_id>/: one browser tab's view of its
chat's shell.

Bytes both ways, nothing decoded: binary messages are keystrokes in and
terminal output out. Text messages are JSON: from the tab `resize`
({cols, rows}) and `ack` ({bytes}: output shown so far, which is what lets
the server tell a slow tab from a fast one); to the tab `ready`, `error`,
`notice` and `closed`.

XSS on this page would be a shell, not a leaked chat, so besides the Origin
check every socket gets (asgi.py) and the session check of
AuthenticatedConsumer, the socket is refused before accept() to anyone but
the chat's owner, and to the owner without the "use agent chats" permission.
"""

from __future__ import annotations

import asyncio
import json
import logging
from urllib.parse import parse_qs

from channels.db import database_sync_to_async

from apps.agents.errors import HostKeyChanged, SSHError
from apps.agents.terminal.registry import TERMINALS
from apps.agents.terminal.session import Frame, Viewer, clamp_size
from apps.agents.terminal.spec import terminal_plan_for
from apps.core.consumers import AuthenticatedConsumer

logger = logging.getLogger(__name__)

CLOSE_FAILED = 4400  # could not start: the panel shows why and offers to retry
CLOSE_DROPPED = 4408  # fell behind: the panel reconnects at once and gets the scrollback
CLOSE_ENDED = 4410  # the shell ended: the panel offers a new one
MAX_INPUT_MESSAGE = 64 * 1024


class TerminalConsumer(AuthenticatedConsumer):
    session = None
    viewer = None

    async def authorize(self) -> bool:
        self.chat_id = int(self.scope["url_route"]["kwargs"]["chat_id"])
        self.plan = await database_sync_to_async(terminal_plan_for)(self.user, self.chat_id)
        return self.plan is not None

    def _requested_size(self) -> tuple[int, int] | None:
        query = parse_qs(self.scope.get("query_string", b"").decode("latin-1"))
        return clamp_size(query.get("cols", [None])[0], query.get("rows", [None])[0])

    async def on_authenticated(self) -> None:
        if self.plan.spec is None:
            await self._fail(self.plan.error, self.plan.fix_url)
            return
        size = self._requested_size()
        try:
            session = await TERMINALS.session_for(self.plan.spec, size)
        except SSHError as exc:
            # A changed host key is fixed on the profile's page (forget the pinned key).
            fix = f"{self.plan.fix_url}#forget" if isinstance(exc, HostKeyChanged) else ""
            await self._fail(str(exc), fix)
            return
        self.viewer = Viewer(send=self._send_frame, on_drop=self._dropped, size=size)
        self.session = session
        snapshot = session.attach(self.viewer)
        self.viewer.notify(
            {
                "type": "ready",
                "cols": session.size[0],
                "rows": session.size[1],
                "marks": session.marks_seen,
                "scrollback": len(snapshot),
            }
        )
        self.viewer.preload(snapshot)
        self.viewer.start()

    async def _fail(self, message: str, fix_url: str) -> None:
        await self.send(
            text_data=json.dumps({"type": "error", "message": message, "fix_url": fix_url})
        )
        await self.close(code=CLOSE_FAILED)

    async def _send_frame(self, frame: Frame) -> None:
        if isinstance(frame, bytes):
            await self.send(bytes_data=frame)
            return
        await self.send(text_data=json.dumps(frame))
        if frame.get("type") == "closed":
            await self.close(code=CLOSE_ENDED)

    def _dropped(self) -> None:
        # Called from the session's output path, which must not wait.
        self._closing = asyncio.get_running_loop().create_task(self.close(code=CLOSE_DROPPED))

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        session, viewer = self.session, self.viewer
        if session is None or viewer is None or viewer.dropped:
            return
        if bytes_data is not None:
            if len(bytes_data) > MAX_INPUT_MESSAGE or not session.write(bytes_data):
                await self.send(
                    text_data=json.dumps(
                        {
                            "type": "notice",
                            "message": "The remote machine is not taking input that fast; "
                            "some of what was typed or pasted was not sent.",
                        }
                    )
                )
            return
        try:
            message = json.loads(text_data or "")
        except ValueError:
            return
        if not isinstance(message, dict):
            return
        if message.get("type") == "ack":
            viewer.ack(message.get("bytes"))
        elif message.get("type") == "resize":
            size = clamp_size(message.get("cols"), message.get("rows"))
            if size:
                session.resize(viewer, size)

    async def disconnect(self, code: int) -> None:
        if self.viewer is not None:
            if self.session is not None:
                self.session.detach(self.viewer)  # detach, never close: the shell lives on
            await self.viewer.stop()
        await super().disconnect(code)
