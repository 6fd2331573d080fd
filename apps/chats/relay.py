"""The one path a chat's live frames take to the browser: the channel layer.

A reply runs in one web process (apps.chats.live); its frames are sent to the
chat's group (`chat_group`), which every socket following the chat joins
(apps.chats.consumers), whichever process holds it. With the in-memory layer
(one web process, the default) that is a hop inside the process; with
JARVIS_CHANNEL_LAYER=redis://… it reaches the sockets of every process. The
process running a chat's replies also listens on the chat's owner group
(apps.chats.owner), so a socket or a Stop on another process can ask it for
the replies whole or stop one.

A chat's frames leave in the order they were made: one sender task per
chat (while there is something to send) drains its lane of the outbox
(concurrent group_sends to Redis could overtake each other, and an append
frame overtaken by a later one is a gap). A lane is bounded: while the layer
cannot keep up (a Redis that stalls or went away) frames are dropped and,
once it drains, the chat is sent `chat.resync`, upon which its sockets fetch
the replies whole.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time

from channels.layers import get_channel_layer

logger = logging.getLogger(__name__)

# Frames waiting for the layer, per chat: about 15 seconds of one reply's.
LANE_FRAMES = 200
# Frames waiting behind one another are sent as one message up to about this size.
JOINED_CHARS = 64_000
# A layer error is logged at most this often (a Redis that went away would
# otherwise log every frame of every reply).
ERROR_LOG_INTERVAL = 30.0


def chat_group(chat_id: int) -> str:
    """The group of every socket following chat `chat_id`."""
    return f"chat.{int(chat_id)}"


def owner_group(chat_id: int) -> str:
    """The group of the processes running a reply of chat `chat_id` (apps.chats.owner)."""
    return f"chat-owner.{int(chat_id)}"


class Lane:
    """One group's messages, sent in order by a task that runs while there
    is something to send."""

    def __init__(self) -> None:
        self.queue: collections.deque = collections.deque()
        self.lost = False  # frames were dropped while it was full: a resync is owed
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
                    await self._send(layer, group, {"type": "chat.resync"})
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
    return {"type": "chat.frame", "html": "".join(parts)} if len(parts) > 1 else message


_outboxes: dict[asyncio.AbstractEventLoop, Outbox] = {}


def _outbox() -> Outbox:
    """The running event loop's outbox (tests and the CLI run one loop after another)."""
    loop = asyncio.get_running_loop()
    outbox = _outboxes.get(loop)
    if outbox is None:
        for old in [key for key in _outboxes if key.is_closed()]:
            del _outboxes[old]
        outbox = _outboxes[loop] = Outbox(loop)
    return outbox


def publish(chat_id: int, html: str) -> None:
    """A frame for every socket following the chat, in any process."""
    _outbox().put(chat_group(chat_id), {"type": "chat.frame", "html": html})


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
