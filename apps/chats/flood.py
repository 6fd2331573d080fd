"""A send flood from one person is refused with a clear message; others are unaffected.

Two limits, both counted in the database so every web process agrees (a
per-process counter would let a flood through N processes N times): replies
of the person's that are still being written (`Message.WRITING`: pending or
streaming; a reply waiting on the person's own approval card costs nothing and
is not counted), and replies started in the last minute. Send, regenerate and edit
each start one reply, so each is counted by the reply it creates.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from apps.chats.models import Message
from apps.core.errors import TooMany

WINDOW = timedelta(minutes=1)


def flood_check(user) -> None:
    """Raise TooMany when `user` may not start another reply now."""
    replies = Message.objects.filter(chat__owner=user, role=Message.Role.ASSISTANT)
    running = replies.filter(status__in=Message.WRITING).count()
    if running >= settings.CHAT_MAX_RUNNING_PER_PERSON:
        raise TooMany(
            f"You already have {_replies(running)} being written. Wait for one to finish "
            "(or stop one), then send again."
        )
    recent = replies.filter(created_at__gte=timezone.now() - WINDOW).count()
    if recent >= settings.CHAT_MAX_REPLIES_PER_MINUTE:
        raise TooMany(
            f"You have started {_replies(recent)} in the last minute, the most one person "
            "may. Wait a moment, then send again."
        )


def _replies(count: int) -> str:
    return f"{count} {'reply' if count == 1 else 'replies'}"
