"""Telling an open editor that something changed in its draft (a new
suggestion from the assistant), through the web process's channel layer."""

from __future__ import annotations

import logging

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

logger = logging.getLogger(__name__)


def draft_group(draft_id: int) -> str:
    return f"draft.{int(draft_id)}"


def notify(draft_id: int, **event) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        async_to_sync(layer.group_send)(draft_group(draft_id), {"type": "draft.event", **event})
    except Exception:
        # An editor that misses this finds the suggestion when it next loads the file.
        logger.exception("could not notify editors of draft %s", draft_id)
