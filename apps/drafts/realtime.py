"""Telling an open editor that something changed in its draft (a new
suggestion from the assistant), through the web process's channel layer."""

from __future__ import annotations

import logging

from apps.core.realtime import layer_send

logger = logging.getLogger(__name__)


def draft_group(draft_id: int) -> str:
    return f"draft.{int(draft_id)}"


def notify(draft_id: int, **event) -> None:
    try:
        layer_send(draft_group(draft_id), {"type": "draft.event", **event})
    except Exception:
        # An editor that misses this finds the suggestion when it next loads the file.
        logger.exception("could not notify editors of draft %s", draft_id)
