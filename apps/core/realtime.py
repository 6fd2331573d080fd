"""Small helpers for talking to open websockets from sync code."""

from __future__ import annotations

import logging

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from apps.core import bridge
from apps.core.layers import layer_spans_processes

logger = logging.getLogger(__name__)


def session_group(session_key: str) -> str:
    # Group names allow ASCII letters, digits, "-", "_" and "."; session keys are alphanumeric.
    return f"session.{session_key}"


def user_group(user_id: int) -> str:
    return f"user.{user_id}"


def layer_send(group: str, message: dict) -> None:
    """`message` to every socket in `group`, from any process of the instance:
    through the channel layer, and, with the in-memory layer in a process that
    holds no sockets (the worker, a manage.py command), through the web
    process's bridge (apps.core.bridge). Raises what the layer raises."""
    layer = get_channel_layer()
    if layer is None:
        return
    async_to_sync(layer.group_send)(group, message)
    if not layer_spans_processes() and not bridge.serving_here():
        bridge.forward(group, message)


def close_sockets(group: str) -> None:
    """Ask every consumer in `group` to close, in whichever process holds it;
    sockets also re-check their session periodically, for a web process
    that was not listening."""
    layer_send(group, {"type": "session.ended"})
