"""Replies being written in this web process. Each is a Generation (the Reply
plus its task and the blocks changed since the last frame) in REGISTRY, keyed
by message id; closing a tab does not stop it, a reload or a second tab
re-attaches, and every open socket of the chat gets whole rendered blocks
about 15 times a second (`flush`)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Coroutine
from dataclasses import dataclass, field

from apps.chats import frames
from apps.chats.models import Chat, Message
from apps.chats.reply import Reply

FRAME_INTERVAL = 0.066  # about 15 frames per second at most
# The first periodic save comes this long after the start (apps.chats.saving).
SAVE_INTERVAL = 2.0


@dataclass
class Generation(Reply):
    """A reply being written: the Reply plus what only the running task needs."""

    status_line: str = "Thinking…"
    dirty: set = field(default_factory=set)  # blocks changed since the last frame
    task: asyncio.Task | None = None
    # The first periodic save comes SAVE_INTERVAL after the start, not at the
    # first token (when a burst of sends is still being handled).
    last_save: float = field(default_factory=time.monotonic)
    save_task: asyncio.Task | None = None

    def touch(self, *blocks: str) -> None:
        self.dirty.update(blocks)


class Registry:
    """The running replies of this process and the sockets following each chat."""

    def __init__(self) -> None:
        self.generations: dict[int, Generation] = {}
        self.listeners: dict[int, set[asyncio.Queue]] = {}

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

    def subscribe(self, chat_id: int) -> asyncio.Queue:
        queue: asyncio.Queue = asyncio.Queue()
        self.listeners.setdefault(chat_id, set()).add(queue)
        return queue

    def unsubscribe(self, chat_id: int, queue: asyncio.Queue) -> None:
        self.listeners.get(chat_id, set()).discard(queue)

    def publish(self, chat_id: int, html: str) -> None:
        for queue in list(self.listeners.get(chat_id, ())):
            queue.put_nowait(html)

    def finished(self, generation: Generation) -> None:
        self.generations.pop(generation.pk, None)


REGISTRY = Registry()


def flush(generation: Generation, *, everything: bool = False) -> None:
    blocks = frames.BLOCKS if everything else [b for b in frames.BLOCKS if b in generation.dirty]
    generation.dirty.clear()
    if blocks or everything:
        REGISTRY.publish(
            generation.chat_id,
            frames.render_blocks(generation, blocks, composer=everything),
        )


async def flusher(generation: Generation) -> None:
    while True:
        await asyncio.sleep(FRAME_INTERVAL)
        if generation.dirty:
            flush(generation)


def mark_interrupted(chat: Chat) -> None:
    """Replies left in flight by a previous web process: say so, keep their text."""
    stale = chat.messages.filter(status__in=[Message.Status.PENDING, Message.Status.STREAMING])
    for message in stale:
        if REGISTRY.running(message.pk) is None:
            message.status = Message.Status.INTERRUPTED
            message.notes = [
                *message.notes,
                "Interrupted: the server restarted while this reply was being written.",
            ]
            message.save(update_fields=["status", "notes"])
