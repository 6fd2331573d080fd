"""Small helpers for talking to open websockets from sync code."""

from __future__ import annotations

import logging

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

logger = logging.getLogger(__name__)


def session_group(session_key: str) -> str:
    # Group names allow ASCII letters, digits, "-", "_" and "."; session keys are alphanumeric.
    return f"session.{session_key}"


def user_group(user_id: int) -> str:
    return f"user.{user_id}"


def close_sockets(group: str) -> None:
    """Ask every consumer in `group` to close. Only reaches sockets held by this
    process's channel layer (the one web process); sockets also re-check their
    session periodically, which covers sessions ended from the CLI."""
    layer = get_channel_layer()
    if layer is None:
        return
    async_to_sync(layer.group_send)(group, {"type": "session.ended"})
