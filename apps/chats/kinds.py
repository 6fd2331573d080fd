"""Chat kinds that apps above chats add (agent chats): how `manage.py chat`
starts one from its options. Chats cannot import those apps; they register a
starter from their AppConfig.ready()."""

from __future__ import annotations

from collections.abc import Callable

from apps.chats.models import Chat

# name -> starter(user=…, options=…) -> a new chat of that kind (no messages yet)
STARTERS: dict[str, Callable[..., Chat]] = {}


def chat_kind_register(name: str, starter: Callable[..., Chat]) -> None:
    STARTERS[name] = starter
