"""Notices: short messages for one person, shown as toasts on any open page.

`notice_send` writes a row and, once it is committed, sends `notice.created`
to its owner's notice group through the channel layer; only that person's
live sockets (apps.core.consumers.PingConsumer) join it. With the default
in-memory layer, a notice the worker writes reaches the web process through
its bridge (apps.core.bridge); a socket asks for the person's notices newer
than the last it showed when it connects (what was written while no page was
open), and every NOTICE_CATCH_UP_SECONDS only where no bridge listens in its
process (docs/architecture.md, "Live updates").

Several notices of one kind that arrive close together are one toast
(`group_notices`): "3 files ready: a.pdf, b.docx, c.md", failures in a toast
of their own. A notice is shown until seen (`notices_seen`): dismissed,
gone by itself, or already shown by the open page; the bell keeps the last
day's either way.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import timedelta

from channels.db import database_sync_to_async
from django.conf import settings
from django.db import transaction
from django.template.loader import render_to_string
from django.utils import timezone

from apps.core import bridge
from apps.core.ids import parse_ids
from apps.core.layers import layer_spans_processes
from apps.core.models import Notice
from apps.core.realtime import layer_send

logger = logging.getLogger(__name__)

RECENT = timedelta(days=1)  # older notices are not shown any more
TOASTS_AT_ONCE = 50  # unseen notices a page gathers into toasts on connect
BELL_SIZE = 10  # notices the bell lists
GROUP_GAP = timedelta(minutes=2)  # notices further apart than this are separate toasts

# "{n} …" for a toast of several notices of one kind, by kind and level.
GROUP_HEADINGS = {
    ("document", Notice.Level.OK): "{n} files ready",
    ("document", Notice.Level.ERROR): "{n} files could not be read",
}
DEFAULT_HEADINGS = {Notice.Level.OK: "{n} notices", Notice.Level.ERROR: "{n} problems"}


def notices_group(user_id: int) -> str:
    # Only the notice-carrying socket joins this group: a consumer without a
    # handler for its messages would fail on them.
    return f"notices.{user_id}"


def notice_send(
    *,
    user_id: int,
    text: str,
    level: str = Notice.Level.OK,
    url: str = "",
    kind: str = "",
    subject: str = "",
) -> Notice:
    """Tell one person something finished. Only they see it. `kind` and
    `subject` ("document", "a.pdf") let several of one kind show as one toast;
    `url` is the page of the thing, and a page that lists it shows no toast."""
    notice = Notice.objects.create(
        user_id=user_id,
        text=text[:500],
        level=level,
        url=url,
        kind=kind[:40],
        subject=subject[:200],
    )
    # After commit: a socket that looks the row up must find it.
    transaction.on_commit(lambda: announce(notice))
    return notice


def announce(notice: Notice) -> None:
    """`notice.created` to its owner's sockets, whichever process writes it."""
    try:
        message = {"type": "notice.created", "notice_id": notice.pk}
        layer_send(notices_group(notice.user_id), message)
    except Exception:  # the row is written: a catch-up or the next page load shows it
        logger.warning("could not announce notice %s: the channel layer is unreachable", notice.pk)


def catch_up_seconds(*, joined: bool = True) -> float | None:
    """How often a socket asks for notices it was not sent; None when the
    worker's notices reach it without asking: a shared layer whose group the
    socket `joined`, or this web process's bridge (apps.core.bridge)."""
    if joined and (layer_spans_processes() or bridge.serving_here()):
        return None
    return settings.NOTICE_CATCH_UP_SECONDS


@dataclass
class NoticeGroup:
    """One toast: a single notice, or several of one kind and level."""

    level: str
    kind: str
    notices: list[Notice] = field(default_factory=list)

    @property
    def key(self) -> int:
        # The first notice's id: a group that grows keeps its toast.
        return self.notices[0].pk

    @property
    def ids(self) -> list[int]:
        return [n.pk for n in self.notices]

    @property
    def heading_template(self) -> str:
        return GROUP_HEADINGS.get((self.kind, self.level), DEFAULT_HEADINGS[self.level])

    @property
    def heading(self) -> str:
        return self.heading_template.format(n=len(self.notices))

    @property
    def text(self) -> str:
        """The whole toast in words: its one notice, or "3 files ready: a.pdf, b.docx, c.md"."""
        if len(self.notices) == 1:
            return self.notices[0].text
        if self.level == Notice.Level.ERROR:
            return f"{self.heading}: " + "; ".join(n.text for n in self.notices)
        return f"{self.heading}: " + ", ".join(n.subject or n.text for n in self.notices)

    def takes(self, notice: Notice) -> bool:
        last = self.notices[-1]
        return (
            bool(self.kind)
            and notice.kind == self.kind
            and notice.level == self.level
            and notice.created_at - last.created_at <= GROUP_GAP
        )


def group_notices(notices: list[Notice]) -> list[NoticeGroup]:
    """Oldest first: each notice joins the group before it when it is of the
    same kind and level and came within GROUP_GAP of that group's newest;
    failures are never grouped with successes."""
    groups: list[NoticeGroup] = []
    open_groups: dict[tuple[str, str], NoticeGroup] = {}
    for notice in sorted(notices, key=lambda n: (n.created_at, n.pk)):
        group = open_groups.get((notice.kind, notice.level))
        if group is None or not group.takes(notice):
            group = NoticeGroup(level=notice.level, kind=notice.kind)
            groups.append(group)
            if notice.kind:
                open_groups[(notice.kind, notice.level)] = group
        group.notices.append(notice)
    return groups


def unseen_notices(user) -> list[Notice]:
    """The person's unseen notices of the last day, oldest first."""
    since = timezone.now() - RECENT
    rows = Notice.objects.filter(user=user, dismissed_at=None, created_at__gte=since)
    return list(reversed(rows.order_by("-created_at", "-id")[:TOASTS_AT_ONCE]))


def toasts_for(user) -> list[NoticeGroup]:
    return group_notices(unseen_notices(user))


def toast_with(user, notice_id: int) -> NoticeGroup | None:
    """The toast that shows this notice now (with the unseen ones it groups
    with), or None when it is not the person's or already seen."""
    for group in toasts_for(user):
        if notice_id in group.ids:
            return group
    return None


def notices_seen(*, user, ids: list[int]) -> int:
    """Mark the person's own notices seen; how many were unseen until now.
    Ids that no row can have (from a URL or a page's post) are left out here,
    before the query: an id past SQLite's 64 bits would be a 500."""
    ids = parse_ids(ids)
    if not ids:
        return 0
    return Notice.objects.filter(pk__in=ids, user=user, dismissed_at=None).update(
        dismissed_at=timezone.now()
    )


def notice_dismiss(*, user, notice_id: int) -> bool:
    """Dismiss one of the person's own notices. False when they have no such notice."""
    return bool(notices_seen(user=user, ids=[notice_id]))


def bell_for(user) -> dict:
    """The header bell: the last day's notices, newest first, seen ones
    included, and how many are unseen."""
    since = timezone.now() - RECENT
    rows = Notice.objects.filter(user=user, created_at__gte=since)
    return {
        "bell_notices": list(rows.order_by("-created_at", "-id")[:BELL_SIZE]),
        "bell_unseen": rows.filter(dismissed_at=None).count(),
    }


def render_bell(user, *, only_if_any: bool = False) -> str:
    """The bell's count and list as out-of-band swaps (after a toast or a
    dismissal); "" with `only_if_any` when the last day had no notices."""
    bell = bell_for(user)
    if only_if_any and not bell["bell_notices"]:
        return ""
    return render_to_string("core/_bell_items.html", {**bell, "oob": True})


def render_toast(group: NoticeGroup) -> str:
    return render_to_string("core/_notice.html", {"group": group})


def newest_id_for(user) -> int:
    newest = Notice.objects.filter(user=user).order_by("-pk").values_list("pk", flat=True).first()
    return newest or 0


def ids_after(user, last_id: int) -> list[int]:
    """The person's notices newer than `last_id` (the catch-up's one small query)."""
    return list(
        Notice.objects.filter(user=user, pk__gt=last_id).order_by("pk").values_list("pk", flat=True)
    )


# The socket's database calls, from its event loop.
toasts_async = database_sync_to_async(toasts_for)
toast_with_async = database_sync_to_async(toast_with)
render_bell_async = database_sync_to_async(render_bell)
newest_id_async = database_sync_to_async(newest_id_for)
ids_after_async = database_sync_to_async(ids_after)
