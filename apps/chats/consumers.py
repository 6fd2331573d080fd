"""The chat socket: follows the replies of one chat (it never runs them)."""

from __future__ import annotations

import asyncio
import contextlib

from channels.db import database_sync_to_async

from apps.chats import frames
from apps.chats.models import Chat
from apps.chats.runner import REGISTRY
from apps.core.consumers import AuthenticatedConsumer


class ChatConsumer(AuthenticatedConsumer):
    async def authorize(self) -> bool:
        self.chat_id = int(self.scope["url_route"]["kwargs"]["chat_id"])
        return await database_sync_to_async(
            Chat.objects.filter(pk=self.chat_id, owner_id=self.user.pk).exists
        )()

    async def on_authenticated(self) -> None:
        self.queue = REGISTRY.subscribe(self.chat_id)
        self.sender = asyncio.create_task(self._send_frames())
        # Re-attach: a reload or a second tab sees the reply as it is now.
        for generation in REGISTRY.running_in(self.chat_id):
            await self.send(text_data=frames.render_blocks(generation.view(), composer=True))

    async def _send_frames(self) -> None:
        while True:
            html = await self.queue.get()
            # Whole blocks: when a socket falls behind, only the newest frame of
            # a burst matters, but sending each keeps ordering simple and cheap.
            await self.send(text_data=html)

    async def disconnect(self, code: int) -> None:
        queue = getattr(self, "queue", None)
        if queue is not None:
            REGISTRY.unsubscribe(self.chat_id, queue)
        sender = getattr(self, "sender", None)
        if sender is not None:
            sender.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await sender
        await super().disconnect(code)

    async def receive(self, text_data=None, bytes_data=None) -> None:
        """The socket only follows; sending and stopping go through POSTs (CSRF)."""
