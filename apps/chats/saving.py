"""Saving a reply while it streams and when it ends: the fields are copied on
the event loop (`Reply.snapshot`, apps.chats.reply) and written from a
thread, so the stream never waits on the database.

While replies stream, each is saved every SAVE_INTERVAL so that a restart
keeps what it had; the replies due about the same time are written together
(`SAVER`: one thread hop and one transaction for all of them, not one each,
which at a hundred replies was a steady share of the web process). The final
save of a reply is its own, after any batch it was part of has landed."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

from asgiref.sync import sync_to_async
from django.db import close_old_connections, connection, transaction

from apps.chats.history import index_exchange_row
from apps.chats.live import SAVE_INTERVAL
from apps.chats.models import Message
from apps.chats.reply import Generation, Reply, Snapshot
from apps.chats.setup import question_of

logger = logging.getLogger(__name__)


def save(snapshot: Snapshot) -> None:
    if snapshot.final:
        # Not on periodic saves: with CONN_MAX_AGE=0 this always closes the worker
        # thread's connection, and reopening one (sqlite-vec, pragmas) costs about
        # 20 times the UPDATE, for every reply every SAVE_INTERVAL.
        close_old_connections()
    Message.objects.filter(pk=snapshot.message_id).update(**snapshot.fields)
    if snapshot.index:
        index_exchange_of(snapshot.message_id)


def index_exchange_of(message_id: int) -> None:
    # Plain values, not model rows: this runs at the end of every reply.
    row = (
        Message.objects.filter(pk=message_id)
        .values(
            "text", "chat_id", "chat__owner_id", "chat__private", "parent__text", "parent__role"
        )
        .first()
    )
    if row is None:
        return
    if row["parent__role"] == Message.Role.USER:
        question = row["parent__text"]
    else:  # a reply never linked into the tree: the question before it
        found = question_of(Message.objects.select_related("chat").get(pk=message_id))
        if found is None:
            return
        question = found.text
    index_exchange_row(
        answer_id=message_id,
        question=question,
        answer=row["text"],
        owner_id=row["chat__owner_id"],
        chat_id=row["chat_id"],
        private=row["chat__private"],
    )


async def maybe_save(generation: Generation) -> None:
    """Have the reply saved every SAVE_INTERVAL, in the background: the
    stream keeps reading while the rows are written."""
    now = time.monotonic()
    if now - generation.last_save >= SAVE_INTERVAL:
        generation.last_save = now
        SAVER.add(generation)


class Saver:
    """Periodic saves of the running replies, written in batches."""

    GATHER = 0.25  # seconds a batch waits for others falling due

    def __init__(self) -> None:
        self.due: dict[int, Generation] = {}
        self.task: asyncio.Task | None = None

    def add(self, generation: Generation) -> None:
        loop = asyncio.get_running_loop()
        if self.task is not None and (self.task.done() or self.task.get_loop() is not loop):
            # A batch of an event loop that has ended (the CLI and the tests
            # run one loop after another): it will never write, and while it
            # is held no new batch would be started, so no reply is saved.
            self.due, self.task = {}, None
        self.due[generation.pk] = generation
        if self.task is None:
            self.task = loop.create_task(self._write())
            self.task.add_done_callback(_log_failed_save)
        # The final save waits for the batch this reply is in (runner.run).
        generation.save_task = self.task

    async def settled(self, generation: Generation) -> None:
        """Before a reply's final save: take it out of a batch still
        gathering (the final save writes it all), or let the batch already
        writing it land first. A failed batch is already logged."""
        if self.due.pop(generation.pk, None) is not None:
            return
        if generation.save_task is not None and not generation.save_task.done():
            with contextlib.suppress(Exception):
                await asyncio.shield(generation.save_task)

    async def _write(self) -> None:
        await asyncio.sleep(self.GATHER)
        due, self.due, self.task = self.due, {}, None
        snapshots = [generation.snapshot() for generation in due.values()]
        await sync_to_async(save_batch, thread_sensitive=False)(snapshots)


SAVER = Saver()


def save_batch(snapshots: list[Snapshot]) -> None:
    """Write periodic snapshots in one transaction. Only rows still being
    written (Message.WRITING) are touched: a reply whose final save got there
    first keeps it.
    One prepared UPDATE for every row: the ORM would build the same query
    once per reply (apps/chats/live.py's replies, every SAVE_INTERVAL)."""
    if not snapshots:
        return
    fields = [Message._meta.get_field(name) for name in Reply.STORED]
    assignments = ", ".join(f"{connection.ops.quote_name(f.column)} = %s" for f in fields)
    writing = ", ".join(["%s"] * len(Message.WRITING))
    # Only names from the model's own metadata go into the text; values are parameters.
    sql = (
        f"UPDATE {connection.ops.quote_name(Message._meta.db_table)} SET {assignments} "  # noqa: S608
        f"WHERE id = %s AND status IN ({writing})"
    )
    rows = [
        [
            *(f.get_db_prep_save(snap.fields[f.name], connection) for f in fields),
            snap.message_id,
            *Message.WRITING,
        ]
        for snap in snapshots
    ]
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.executemany(sql, rows)


def _log_failed_save(task: asyncio.Task) -> None:
    # A periodic save that fails loses nothing (the final save writes it all),
    # but it is logged rather than left as an unretrieved task exception.
    if not task.cancelled() and task.exception() is not None:
        logger.error("a periodic save of replies failed", exc_info=task.exception())
