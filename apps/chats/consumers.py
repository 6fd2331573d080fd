"""The chat socket: follows the replies of one chat (it never runs them).

Frames come through the channel layer (the chat's group, apps.chats.relay)
from whichever process runs the reply; a reply running in this process is
rendered whole here when the socket opens or asks, one running in another is
asked of its owner (apps.chats.owner), which sends it to this socket."""

from __future__ import annotations

import asyncio
import contextlib
import json

from channels.db import database_sync_to_async

from apps.chats import frames, relay
from apps.chats.live import REGISTRY
from apps.chats.models import Chat, Message
from apps.chats.pages import chat_header_frame
from apps.chats.relay import RESYNC, FrameQueue
from apps.chats.reply import Reply
from apps.chats.usage import chat_usage_line
from apps.core.consumers import AuthenticatedConsumer
from apps.core.ids import parse_id


class ChatConsumer(AuthenticatedConsumer):
    without_database = frozenset({"chat.frame"})

    async def authorize(self) -> bool:
        self.chat_id = int(self.scope["url_route"]["kwargs"]["chat_id"])
        return await database_sync_to_async(
            Chat.objects.filter(pk=self.chat_id, owner_id=self.user.pk).exists
        )()

    async def on_authenticated(self) -> None:
        self.queue = FrameQueue()
        # This process's own replies' frames come whatever the layer does; the
        # other processes' only while it can be reached (a reconnect follows again).
        await relay.follow(self.chat_id, self.queue)
        self.sender = asyncio.create_task(self._send_frames())
        # Re-attach: a reload or a second tab sees the reply as it is now. In a
        # task of its own: the frames go on meanwhile, and this handler returns
        # (the socket's later messages are not held behind the read of the
        # saved reply).
        self.whole = asyncio.create_task(self._send_whole())

    async def chat_frame(self, event: dict) -> None:
        """A reply whole, sent to this socket by the process running it (apps.chats.owner)."""
        self.queue.put(event["html"])

    async def _send_whole(self) -> None:
        """The chat's running replies whole, as they are now; with none
        running here, the latest reply as saved (the page may have been rendered
        while a reply ran that has finished since; a no-op when it shows it),
        and whichever process runs one is asked to send it whole."""
        running = REGISTRY.running_in(self.chat_id)
        for generation in running:
            await self.send(text_data=frames.render_blocks(generation, composer=True, leaf=True))
        if not running:
            html = await database_sync_to_async(self._latest_saved)()
            if html:
                await self.send(text_data=html)
            relay.whole_wanted(self.chat_id, self.channel_name)

    async def _send_frames(self) -> None:
        while True:
            html = await self.queue.get()
            if html == RESYNC:
                # This socket fell behind and its frames were dropped
                # (live.LISTENER_FRAMES): what it missed comes whole.
                await self._send_whole()
                continue
            await self.send(text_data=html)

    async def disconnect(self, code: int) -> None:
        queue = getattr(self, "queue", None)
        if queue is not None:
            await relay.unfollow(self.chat_id, queue)
        for task in (getattr(self, "sender", None), getattr(self, "whole", None)):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        await super().disconnect(code)

    async def receive(self, text_data=None, bytes_data=None) -> None:
        """The socket only follows; sending and stopping go through POSTs (CSRF).

        The page may ask for one reply as it is now ({"refresh": id}): after a
        send, the reply's first frames can arrive before the POST's response
        has put the reply on the page, and a fast reply may even finish then."""
        try:
            message_id = parse_id(json.loads(text_data or "{}").get("refresh"))
        except (ValueError, AttributeError):  # not JSON, or not an object
            return
        if message_id is None:
            return
        html = await self._current(message_id)
        if html:
            await self.send(text_data=html)

    async def _current(self, message_id: int) -> str:
        generation = REGISTRY.generations.get(message_id)
        if generation is not None and generation.chat_id == self.chat_id:
            return frames.render_blocks(generation, composer=True, leaf=True)
        # Running elsewhere, perhaps: its owner sends it whole after the saved copy.
        relay.whole_wanted(self.chat_id, self.channel_name)
        return await database_sync_to_async(self._saved)(message_id)

    def _latest_saved(self) -> str:
        # The reply the branch shown ends with (not the newest of all: that
        # may be an alternative the person paged away from).
        latest = Chat.objects.filter(pk=self.chat_id).values_list("leaf_id", flat=True).first()
        if latest is None:
            latest = (
                Message.objects.filter(chat_id=self.chat_id, role=Message.Role.ASSISTANT)
                .order_by("-pk")
                .values_list("pk", flat=True)
                .first()
            )
        return self._saved(latest, leaf=True) if latest else ""

    def _saved(self, message_id: int, *, leaf: bool = False) -> str:
        message = Message.objects.filter(
            pk=message_id, chat_id=self.chat_id, role=Message.Role.ASSISTANT
        ).first()
        if message is None:
            return ""
        reply = Reply.of(message, configure_link=self.user.is_staff)
        if not reply.in_flight:
            # The page may have missed the final frame (it came before the
            # send's answer put the reply there, or the socket was away): the
            # chat's total and its header (private? which model?) come too.
            reply.chat_usage = chat_usage_line(self.chat_id)
            reply.header = chat_header_frame(self.chat_id)
        return frames.render_blocks(reply, composer=True, leaf=leaf)
