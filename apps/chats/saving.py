"""Saving a reply while it streams and when it ends: the fields are copied on
the event loop (a Snapshot) and written from a thread, at most one periodic
save in flight, so the stream never waits on the database."""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass

from asgiref.sync import sync_to_async
from django.db import close_old_connections

from apps.chats.history import index_exchange
from apps.chats.live import SAVE_INTERVAL, Generation
from apps.chats.models import Message

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Snapshot:
    """The reply's fields copied on the event loop, for a save in a thread."""

    message_id: int
    fields: dict
    final: bool
    index: bool


def snapshot(generation: Generation, *, final: bool = False) -> Snapshot:
    index = final and generation.status == Message.Status.DONE
    return Snapshot(generation.pk, generation.stored(final=final), final, index)


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
    answer = Message.objects.select_related("chat").get(pk=message_id)
    question = (
        answer.chat.messages.filter(pk__lt=answer.pk, role=Message.Role.USER)
        .order_by("-pk")
        .first()
    )
    if question is not None:
        index_exchange(question=question, answer=answer)


async def maybe_save(generation: Generation) -> None:
    """Save the reply so far every SAVE_INTERVAL, in the background: the stream
    keeps reading while the row is written (at most one save in flight)."""
    now = time.monotonic()
    in_flight = generation.save_task is not None and not generation.save_task.done()
    if now - generation.last_save >= SAVE_INTERVAL and not in_flight:
        generation.last_save = now
        generation.save_task = asyncio.create_task(
            sync_to_async(save, thread_sensitive=False)(snapshot(generation))
        )
        generation.save_task.add_done_callback(_log_failed_save)


def _log_failed_save(task: asyncio.Task) -> None:
    # A periodic save that fails loses nothing (the final save writes it all),
    # but it is logged rather than left as an unretrieved task exception.
    if not task.cancelled() and task.exception() is not None:
        logger.error("a periodic save of a reply failed", exc_info=task.exception())
