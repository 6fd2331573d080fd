"""The path a chat's live frames take to the browser.

A reply runs in one web process (apps.chats.live) and publishes its frames
here. Each process keeps the sockets following a chat (their bounded
FrameQueues, `follow`) and hands a frame to each of them directly. With a
channel layer that spans processes (JARVIS_CHANNEL_LAYER=redis://…), the
frame also goes to the chat's group (`chat_group`), which each process with a
socket following the chat has joined once, with a channel of its own
(`Fanout`), and that process hands it to its sockets: a reply running in one
daphne is followed from every other. One layer message per process, not per
socket; the frames of a process's own replies are not read back from the
layer. The in-memory layer (one process, the default) reaches no other
process, so frames do not travel it at all.

The process running a chat's replies also listens on the chat's owner group
(apps.chats.owner), so a socket or a Stop on another process can ask it for
the replies whole or stop one.

A chat's frames leave for the layer in the order they were made: one sender
task per chat (while there is something to send) drains its lane of the
outbox (concurrent group_sends to Redis could overtake each other, and an
append frame overtaken by a later one is a gap). A lane is bounded: while the
layer cannot keep up (a Redis that stalls or went away) frames are dropped
and, once it drains, the chat is sent `chat.resync`, upon which the sockets
of the other processes are sent the replies whole.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import time
import uuid

from channels.layers import get_channel_layer

from apps.core.layers import layer_spans_processes

logger = logging.getLogger(__name__)

# Frames queued for one socket (about 4 s of a streaming reply); a socket
# further behind is sent RESYNC instead: the replies whole, once it reads on.
LISTENER_FRAMES = 64
RESYNC = ""  # no frame is empty
# Frames waiting for the layer, per chat: about 15 seconds of one reply's.
LANE_FRAMES = 200
# Frames waiting behind one another are sent as one message up to about this size.
JOINED_CHARS = 64_000
# A layer error is logged at most this often (a Redis that went away would
# otherwise log every frame of every reply).
ERROR_LOG_INTERVAL = 30.0
# This process, as the origin of the frames it sends to the layer.
ORIGIN = uuid.uuid4().hex


def chat_group(chat_id: int) -> str:
    """The group of every process with a socket following chat `chat_id`."""
    return f"chat.{int(chat_id)}"


def owner_group(chat_id: int) -> str:
    """The group of the processes running a reply of chat `chat_id` (apps.chats.owner)."""
    return f"chat-owner.{int(chat_id)}"


class FrameQueue:
    """The frames waiting to be written to one socket, bounded: a socket this
    far behind (a phone on a bad line, a stalled tab) is not owed every frame
    it missed, and its queue must not grow without end: what it holds is
    dropped and it is sent the chat's replies whole (RESYNC), as they are
    when it reads on."""

    def __init__(self, size: int = LISTENER_FRAMES) -> None:
        self.queue: asyncio.Queue = asyncio.Queue(maxsize=size)

    def put(self, html: str) -> None:
        if self.queue.full():
            while not self.queue.empty():
                self.queue.get_nowait()
            self.queue.put_nowait(RESYNC)
        else:
            self.queue.put_nowait(html)

    async def get(self) -> str:
        return await self.queue.get()


class Fanout:
    """This process's sockets by chat, and (with a layer that spans
    processes) its channel in the groups of the chats they follow."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.sockets: dict[int, set[FrameQueue]] = {}
        self.channel: str | None = None
        self.task: asyncio.Task | None = None
        self.ready = asyncio.Event()

    def deliver(self, chat_id: int, html: str) -> None:
        for queue in list(self.sockets.get(chat_id, ())):
            queue.put(html)

    async def follow(self, chat_id: int, queue: FrameQueue) -> bool:
        self.sockets.setdefault(chat_id, set()).add(queue)
        if not layer_spans_processes():
            return True
        if self.task is None or self.task.done():
            self.ready.clear()
            self.task = self.loop.create_task(self._listen())
        try:
            await asyncio.wait_for(self.ready.wait(), 5)
            # For a chat already followed here, joining again refreshes the membership.
            await get_channel_layer().group_add(chat_group(chat_id), self.channel)
        except Exception:  # frames of this process's replies still come
            logger.warning("could not follow chat %s through the channel layer", chat_id)
            return False
        return True

    async def unfollow(self, chat_id: int, queue: FrameQueue) -> None:
        queues = self.sockets.get(chat_id)
        if queues is None:
            return
        queues.discard(queue)
        if queues:
            return
        del self.sockets[chat_id]
        if self.channel is not None and layer_spans_processes():
            with contextlib.suppress(Exception):  # a layer gone away has forgotten us anyway
                await get_channel_layer().group_discard(chat_group(chat_id), self.channel)

    async def _listen(self) -> None:
        await listen(self, self._handle)

    async def _handle(self, layer, message: dict) -> None:
        chat_id = message.get("chat_id")
        if message.get("origin") == ORIGIN or chat_id is None:
            return  # this process's own frames were handed over already
        if message.get("type") == "chat.resync":
            self.deliver(int(chat_id), RESYNC)
        elif message.get("type") == "chat.frame":
            self.deliver(int(chat_id), message["html"])


async def listen(holder, handle) -> None:
    """Give `holder` a channel of this process (`holder.channel`, then
    `holder.ready` set) and hand each message on it to `handle(layer,
    message)` until cancelled; a layer gone away is tried again each second,
    and a message that fails is logged without stopping the listener."""
    layer = get_channel_layer()
    # The layer's default prefix, as every consumer's channel has: the
    # list-based channels_redis reads a process's channels through one list
    # per prefix (a receiver of another would hold the read lock).
    holder.channel = await layer.new_channel()
    holder.ready.set()
    while True:
        try:
            message = await layer.receive(holder.channel)
        except asyncio.CancelledError:
            raise
        except Exception:  # a layer gone away: try again in a moment
            await asyncio.sleep(1.0)
            continue
        try:
            await handle(layer, message)
        except Exception:  # one bad message never stops the listener
            logger.exception("a %s message failed", type(holder).__name__)


def per_loop(instances: dict, make):
    """The running event loop's instance from `instances`, made by
    `make(loop)` the first time (tests and the CLI run one loop after
    another; instances of closed loops are dropped)."""
    loop = asyncio.get_running_loop()
    instance = instances.get(loop)
    if instance is None:
        for old in [key for key in instances if key.is_closed()]:
            del instances[old]
        instance = instances[loop] = make(loop)
    return instance


_fanouts: dict[asyncio.AbstractEventLoop, Fanout] = {}


def _fanout() -> Fanout:
    return per_loop(_fanouts, Fanout)


async def follow(chat_id: int, queue: FrameQueue) -> bool:
    """A socket of this process follows chat `chat_id`: every frame of its
    replies, run here or (with a layer spanning processes) elsewhere, is put
    in `queue`. False when the layer could not be joined (this process's own
    replies are still followed)."""
    return await _fanout().follow(chat_id, queue)


async def unfollow(chat_id: int, queue: FrameQueue) -> None:
    await _fanout().unfollow(chat_id, queue)


class Lane:
    """One group's messages, sent in order by a task that runs while there
    is something to send."""

    def __init__(self) -> None:
        self.queue: collections.deque = collections.deque()
        self.lost = False  # frames were dropped while it was full: a resync is owed
        self.resync_chat: int | None = None
        self.task: asyncio.Task | None = None


class Outbox:
    """Messages for the channel layer, a lane per group: in order within a
    chat, and chats independent of each other (a group_send yields to the
    event loop at least once, so one lane for every chat would send one
    frame per turn of the loop, and a hundred streaming replies fell seconds
    behind)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.lanes: dict[str, Lane] = {}
        self.last_error = 0.0

    def put(self, group: str, message: dict) -> None:
        lane = self.lanes.get(group)
        if lane is None:
            lane = self.lanes[group] = Lane()
        if len(lane.queue) >= LANE_FRAMES:
            lane.lost = True
            lane.resync_chat = message.get("chat_id")
            return
        lane.queue.append(message)
        if lane.task is None:
            lane.task = self.loop.create_task(self._drain(group, lane))

    async def _drain(self, group: str, lane: Lane) -> None:
        layer = get_channel_layer()
        try:
            while lane.queue:
                await self._send(layer, group, _joined(lane.queue))
                if lane.lost and not lane.queue:
                    lane.lost = False
                    chat_id = lane.resync_chat
                    resync = {"type": "chat.resync", "chat_id": chat_id, "origin": ORIGIN}
                    await self._send(layer, group, resync)
        finally:
            lane.task = None
            if not lane.queue:
                self.lanes.pop(group, None)

    async def _send(self, layer, group: str, message: dict) -> None:
        try:
            await layer.group_send(group, message)
        except Exception:  # the reply goes on; its saved message keeps everything
            now = time.monotonic()
            if now - self.last_error >= ERROR_LOG_INTERVAL:
                self.last_error = now
                logger.warning("chat frames could not reach the channel layer", exc_info=True)


def _joined(queue: collections.deque) -> dict:
    """The next message of a lane; frames waiting behind one another are sent
    as one (a frame is a run of whole blocks and appends that the page applies
    in order, so two in a row are a frame too). While the layer keeps up a
    frame goes alone; when it falls behind, a chat's backlog becomes one
    message per round trip instead of growing."""
    message = queue.popleft()
    if message["type"] != "chat.frame":
        return message
    parts, size = [message["html"]], len(message["html"])
    while queue and queue[0]["type"] == "chat.frame" and size < JOINED_CHARS:
        html = queue.popleft()["html"]
        parts.append(html)
        size += len(html)
    return {**message, "html": "".join(parts)} if len(parts) > 1 else message


_outboxes: dict[asyncio.AbstractEventLoop, Outbox] = {}


def _outbox() -> Outbox:
    return per_loop(_outboxes, Outbox)


def publish(chat_id: int, html: str) -> None:
    """A frame for every socket following the chat: this process's at once,
    the other processes' through the layer."""
    _fanout().deliver(chat_id, html)
    if layer_spans_processes():
        message = {"type": "chat.frame", "chat_id": int(chat_id), "html": html, "origin": ORIGIN}
        _outbox().put(chat_group(chat_id), message)


def ask_owners(chat_id: int, message: dict) -> None:
    """A request for whichever process runs the chat's replies (apps.chats.owner):
    `owner.whole` (send them whole to `reply_to`) or `owner.stop`."""
    _outbox().put(owner_group(chat_id), message)


def whole_wanted(chat_id: int, reply_to: str) -> None:
    """Have the chat's replies running in other processes sent whole to the
    socket `reply_to` (a socket that opened, fell behind or saw a gap)."""
    ask_owners(chat_id, {"type": "owner.whole", "chat_id": int(chat_id), "reply_to": reply_to})


def stop_elsewhere(chat_id: int, message_id: int) -> None:
    """Stop reply `message_id` in whichever process runs it."""
    ask_owners(chat_id, {"type": "owner.stop", "message_id": int(message_id)})
