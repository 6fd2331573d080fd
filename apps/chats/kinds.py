"""Chat kinds that apps above chats add (agent chats): how `manage.py chat`
starts one from its options, and what the system prompt says about such a
chat. Chats cannot import those apps; they register from their `registrations`."""

from __future__ import annotations

from collections.abc import Callable

from apps.chats.models import Chat

# name -> starter(user=…, options=…) -> a new chat of that kind (no messages yet)
STARTERS: dict[str, Callable[..., Chat]] = {}


def chat_kind_register(name: str, starter: Callable[..., Chat]) -> None:
    STARTERS[name] = starter


# chat -> a paragraph for the system prompt ("" when it does not apply)
PROMPT_PARTS: list[Callable[[Chat], str]] = []


def prompt_part_register(part: Callable[[Chat], str]) -> None:
    if part not in PROMPT_PARTS:
        PROMPT_PARTS.append(part)


def prompt_parts(chat: Chat) -> list[str]:
    return [text for part in PROMPT_PARTS if (text := part(chat))]
