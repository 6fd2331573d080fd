"""Notices: short messages for one person, shown as toasts on any open page.

`notice_send` writes a row; it may run in the worker (an upload finished
indexing) or in the web process. The worker cannot reach the web process's
in-memory channel layer, so the web process relays new rows itself: one
`NoticeRelay` task per process looks for rows newer than the last it saw (one
small query a second, however many pages are open, and only while someone is
connected) and sends each to its owner's notice group, which only that
person's live sockets join. A page that connects later gets the person's
undismissed notices of the last day from `recent_notices_for`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import timedelta

from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.db.models import Max
from django.utils import timezone

from apps.core.models import Notice

logger = logging.getLogger(__name__)

RECENT = timedelta(days=1)  # older notices are not shown any more
SHOWN_AT_ONCE = 5
RELAY_INTERVAL = 1.0  # seconds between looks for new notices


def notices_group(user_id: int) -> str:
    # Only the notice-carrying socket joins this group: a consumer without a
    # handler for its messages would fail on them.
    return f"notices.{user_id}"


def notice_send(*, user_id: int, text: str, level: str = Notice.Level.OK, url: str = "") -> Notice:
    """Tell one person something finished. Only they see it."""
    return Notice.objects.create(user_id=user_id, text=text[:500], level=level, url=url)


def recent_notices_for(user) -> list[Notice]:
    """The person's undismissed notices of the last day, oldest first."""
    since = timezone.now() - RECENT
    rows = Notice.objects.filter(user=user, dismissed_at=None, created_at__gte=since)
    return list(reversed(rows.order_by("-created_at", "-id")[:SHOWN_AT_ONCE]))


def notice_dismiss(*, user, notice_id: int) -> bool:
    """Dismiss one of the person's own notices. False when they have no such notice."""
    updated = Notice.objects.filter(pk=notice_id, user=user, dismissed_at=None).update(
        dismissed_at=timezone.now()
    )
    return bool(updated)


class NoticeRelay:
    """Relays notices written anywhere (the worker included) to the sockets
    of this process. Started by the first socket that wants notices, stopped
    when the last one leaves."""

    def __init__(self) -> None:
        self.listeners = 0
        self.task: asyncio.Task | None = None
        self.last_id: int | None = None

    async def join(self) -> None:
        self.listeners += 1
        if self.task is None or self.task.done():
            if self.last_id is None:
                self.last_id = await _newest_id()
            self.task = asyncio.create_task(self._run())

    async def leave(self) -> None:
        self.listeners = max(0, self.listeners - 1)
        if self.listeners == 0 and self.task is not None:
            # Forgotten before the await: a page that joins meanwhile (the next
            # page of a navigation) must start a new task, not keep this one.
            task, self.task = self.task, None
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _run(self) -> None:
        layer = get_channel_layer()
        while True:
            await asyncio.sleep(RELAY_INTERVAL)
            try:
                fresh = await _notices_after(self.last_id or 0)
            except Exception:  # a locked or busy database: try again next time
                logger.exception("could not read new notices")
                continue
            for notice_id, user_id in fresh:
                self.last_id = notice_id
                await layer.group_send(
                    notices_group(user_id), {"type": "notice.show", "notice_id": notice_id}
                )


@database_sync_to_async
def _newest_id() -> int:
    return Notice.objects.aggregate(newest=Max("id"))["newest"] or 0


@database_sync_to_async
def _notices_after(last_id: int) -> list[tuple[int, int]]:
    return list(
        Notice.objects.filter(pk__gt=last_id).order_by("pk").values_list("pk", "user_id")[:100]
    )


@database_sync_to_async
def notice_for(user, notice_id: int) -> Notice | None:
    return Notice.objects.filter(pk=notice_id, user=user, dismissed_at=None).first()


@database_sync_to_async
def recent_notices_async(user) -> list[Notice]:
    return recent_notices_for(user)


relay = NoticeRelay()
