"""This process as the owner of the replies it runs, reachable through the
channel layer (apps.chats.relay).

While a reply of a chat runs here, this process's own channel is in the
chat's owner group, and answers two requests from any process: `owner.whole`
(a socket elsewhere opened, fell behind or saw a gap: the chat's running
replies are sent to it whole) and `owner.stop` (Stop was pressed on a page
served by another process). With the in-memory layer the requests come from
this process only, through the same path.

Replies left being written (`Message.WRITING`) by a process that ended (a
restart, a crash) are marked interrupted; one waiting for the person's
answer has no task to lose and is left waiting. With one web process every
such reply in the database is an orphan when the process starts. With several
sharing a layer, another process may be running it right now, so the owner
keeps a lease: every HEARTBEAT seconds the replies running here are touched
(`updated_at`), and each process marks interrupted the replies being written
that nobody touched for LEASE seconds: at start and every LEASE seconds after
(`orphan_watch`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import timedelta

from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.utils import timezone

from apps.chats import frames
from apps.chats.live import REGISTRY
from apps.chats.models import Message
from apps.chats.relay import listen, owner_group, per_loop
from apps.core.layers import layer_spans_processes

logger = logging.getLogger(__name__)

HEARTBEAT = 15.0  # seconds between touches of the replies running here
LEASE = 60.0  # a reply untouched this long is no process's any more

INTERRUPTED_NOTE = "Interrupted: the server restarted while this reply was being written."


class Owner:
    """This process's channel, listening while replies run here."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.channel: str | None = None
        self.ready = asyncio.Event()
        self.chats: dict[int, int] = {}  # chat id → replies of it running here
        self.task = loop.create_task(self._listen())
        self.beat = loop.create_task(_heartbeat()) if layer_spans_processes() else None

    async def claim(self, chat_id: int) -> None:
        self.chats[chat_id] = self.chats.get(chat_id, 0) + 1
        await self.ready.wait()
        await get_channel_layer().group_add(owner_group(chat_id), self.channel)

    async def release(self, chat_id: int) -> None:
        left = self.chats.get(chat_id, 1) - 1
        if left > 0:
            self.chats[chat_id] = left
            return
        self.chats.pop(chat_id, None)
        if self.channel is not None:
            await get_channel_layer().group_discard(owner_group(chat_id), self.channel)

    def idle(self) -> bool:
        return not self.chats

    def close(self) -> None:
        """No reply runs here any more: the listener and the heartbeat end (a
        new reply starts a new owner)."""
        for task in (self.task, self.beat):
            if task is not None:
                task.cancel()

    async def _listen(self) -> None:
        await listen(self, self._handle)

    async def _handle(self, layer, message: dict) -> None:
        kind = message.get("type")
        if kind == "owner.stop":
            REGISTRY.cancel(int(message["message_id"]))
        elif kind == "owner.whole":
            for generation in REGISTRY.running_in(int(message["chat_id"])):
                html = frames.render_blocks(generation, composer=True, leaf=True)
                await layer.send(message["reply_to"], {"type": "chat.frame", "html": html})


_owners: dict[asyncio.AbstractEventLoop, Owner] = {}


def _owner() -> Owner:
    return per_loop(_owners, Owner)


async def claim(chat_id: int) -> None:
    """A reply of `chat_id` starts running here: requests about it reach this process."""
    try:
        await asyncio.wait_for(_owner().claim(chat_id), timeout=5)
    except Exception:  # the reply runs anyway; only other processes cannot reach it
        logger.warning("could not register reply owner for chat %s", chat_id, exc_info=True)


async def release(chat_id: int) -> None:
    owner = _owners.get(asyncio.get_running_loop())
    if owner is None:
        return
    with contextlib.suppress(Exception):  # a layer gone away has forgotten the group anyway
        await asyncio.wait_for(owner.release(chat_id), timeout=5)
    if owner.idle():
        _owners.pop(owner.loop, None)
        owner.close()


async def _heartbeat() -> None:
    """Every HEARTBEAT seconds, touch the replies running here (with a shared
    layer: the lease that tells other processes they are not orphans)."""
    while True:
        await asyncio.sleep(HEARTBEAT)
        running = list(REGISTRY.generations)
        if running:
            try:
                await sync_to_async(_touch, thread_sensitive=False)(running)
            except Exception:  # the next beat tries again; LEASE is four beats
                logger.warning("could not touch the running replies", exc_info=True)


def _touch(message_ids: list[int]) -> None:
    Message.objects.filter(pk__in=message_ids).update(updated_at=timezone.now())


def interrupted_sweep() -> int:
    """Replies left being written (pending or streaming) by a process that ended: marked
    interrupted (their text kept, a note saying why). A reply running here is
    left alone, and with a shared layer so is one another process touched in
    the last LEASE seconds. Returns how many were marked. Run once when this
    process starts serving (jarvis_site.asgi, apps.core.startup) and, with a
    shared layer, every LEASE seconds (`orphan_watch`)."""
    stale = Message.objects.filter(role=Message.Role.ASSISTANT, status__in=Message.WRITING)
    if layer_spans_processes():
        stale = stale.filter(updated_at__lt=timezone.now() - timedelta(seconds=LEASE))
    marked = 0
    for message in stale:
        if REGISTRY.running(message.pk) is not None:
            continue
        message.status = Message.Status.INTERRUPTED
        message.notes = [*message.notes, INTERRUPTED_NOTE]
        message.save(update_fields=["status", "notes", "updated_at"])
        marked += 1
    if marked:
        logger.info("%d replies left by an ended web process marked interrupted", marked)
    return marked


async def orphan_watch() -> None:
    """With a shared layer: every LEASE seconds, the sweep again (a sibling
    process that crashed and came back at once left replies no one owns)."""
    if not layer_spans_processes():
        return
    while True:
        await asyncio.sleep(LEASE)
        try:
            await sync_to_async(interrupted_sweep, thread_sensitive=False)()
        except Exception:  # the next round tries again
            logger.exception("the sweep of orphaned replies failed")
