"""Replies being written in this web process: the registry, the ticker and
the frames.

Each reply is a Generation (the Reply as its task writes it,
apps.chats.reply) in REGISTRY, keyed by message id; closing a tab does not
stop it, a reload or a second tab re-attaches, and every open socket of the
chat, in this process or another, gets a frame about 15 times a second
(`flush`, driven by one TICKER for all replies, handed over by
apps.chats.relay): the text appended to the answer or the reasoning while
they stream (apps.chats.streaming), other blocks whole."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine

from apps.chats import frames, relay
from apps.chats.reply import Generation
from apps.chats.streaming import APPEND, WHOLE

logger = logging.getLogger(__name__)

FRAME_INTERVAL = 0.066  # about 15 frames per second at most
# The first periodic save comes this long after the start (apps.chats.saving).
SAVE_INTERVAL = 2.0


class Registry:
    """The replies running in this process."""

    def __init__(self) -> None:
        self.generations: dict[int, Generation] = {}

    def start(self, generation: Generation, work: Coroutine) -> Generation:
        """Run `work` (the reply's coroutine) as a task of this event loop."""
        self.generations[generation.pk] = generation
        generation.task = asyncio.get_running_loop().create_task(work)
        return generation

    def running(self, message_id: int) -> Generation | None:
        return self.generations.get(message_id)

    def running_in(self, chat_id: int) -> list[Generation]:
        return [g for g in self.generations.values() if g.chat_id == chat_id]

    def cancel(self, message_id: int) -> bool:
        generation = self.generations.get(message_id)
        if generation is None or generation.task is None or generation.task.done():
            return False
        generation.task.cancel()
        return True

    def publish(self, chat_id: int, html: str) -> None:
        """A frame for every socket following the chat, in any process."""
        relay.publish(chat_id, html)

    def finished(self, generation: Generation) -> None:
        self.generations.pop(generation.pk, None)


REGISTRY = Registry()


# How many turns' database work (a send writing its question and reply rows,
# a reply loading its turn) runs at once in this process. Measured with
# bench/stream_load.py, 100 sends within a second: unlimited, a hundred
# threads fought over SQLite's writer lock and the GIL and the send's round
# trip was p50 2.9-3.4 s; four at a time, p50 1.6-1.7 s (docs/chat.md).
SETUP_SLOTS = 4
_slots: dict[asyncio.AbstractEventLoop, asyncio.Semaphore] = {}


def setup_slot() -> asyncio.Semaphore:
    """The running event loop's semaphore (one per loop: a semaphore is bound
    to the loop it first waits on, and tests run several)."""
    loop = asyncio.get_running_loop()
    slot = _slots.get(loop)
    if slot is None:
        for old in [key for key in _slots if key.is_closed()]:
            del _slots[old]
        slot = _slots[loop] = asyncio.Semaphore(SETUP_SLOTS)
    return slot


def flush(generation: Generation, *, everything: bool = False, text_only: bool = False) -> None:
    """Publish what changed since the last frame to every socket of the chat:
    text appended to the answer or the reasoning while they stream, other
    blocks whole. `everything`: every block whole, and the composer.
    `text_only`: only the appended text; other changed blocks wait for the
    next frame."""
    if text_only:
        dirty = generation.dirty & {block for _, _, block in generation.streams()}
        generation.dirty -= dirty
    else:
        generation.dirty, dirty = set(), generation.dirty
    if everything:
        for stream, text, _ in generation.streams():
            stream.synced(text)
        html = frames.render_blocks(generation, composer=True, leaf=True)
        REGISTRY.publish(generation.chat_id, html)
        return
    parts = []
    appends = {}
    if generation.being_written:
        for stream, text, block in generation.streams():
            if block in dirty:
                kind, piece = stream.step(text)
                if kind != WHOLE:
                    dirty.discard(block)
                    if kind == APPEND:
                        appends[block] = piece
    if "header" in dirty and generation.header:
        parts.append(generation.header)
    for block in frames.BLOCKS:
        if block in appends:
            parts.append(appends[block])
        elif block in dirty:
            parts.append(frames.render_block(generation, block))
    if parts:
        REGISTRY.publish(generation.chat_id, "".join(parts))


async def flusher(generation: Generation) -> None:
    """Have the reply's frames published until cancelled. One ticker serves
    every running reply (a timer per reply, 15 times a second each, was a
    measurable share of the event loop at a hundred replies)."""
    TICKER.replies[generation.pk] = generation
    TICKER.ensure()
    try:
        await asyncio.Event().wait()
    finally:
        untick(generation)


def untick(generation: Generation) -> None:
    """No more ticker frames for `generation`."""
    TICKER.replies.pop(generation.pk, None)


class Ticker:
    """Every FRAME_INTERVAL, a frame for each running reply that changed."""

    def __init__(self) -> None:
        self.replies: dict[int, Generation] = {}
        self.task: asyncio.Task | None = None

    def ensure(self) -> None:
        if self.task is None or self.task.done():
            self.task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        while self.replies:
            await asyncio.sleep(FRAME_INTERVAL)
            for generation in list(self.replies.values()):
                if generation.dirty:
                    try:
                        flush(generation)
                    except Exception:  # one reply's frame never stops the others'
                        logger.exception("a frame of reply %s failed", generation.pk)


TICKER = Ticker()
