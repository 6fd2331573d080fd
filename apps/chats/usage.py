"""Token use and cost as a person reads them: under each reply and, summed
over every reply of a chat (alternatives included: they were paid for too),
in the chat's header. The figures are what the provider reported
(`Message.usage`); cost only where it reported one (OpenRouter does, in
credits, which are US dollars). A single reply's line also says how fast it
was written, where the endpoint reported its output tokens (apps.chats.speed)."""

from __future__ import annotations

import math
from collections.abc import Iterable

from apps.chats.models import Chat, Message
from apps.chats.speed import speed_line

COUNTED = ("input_tokens", "output_tokens", "cost")


def usage_sum(usages: Iterable[dict]) -> dict:
    """The figures of several replies added up; a figure no reply reported is absent."""
    total: dict = {}
    for usage in usages:
        for key in COUNTED:
            value = (usage or {}).get(key)
            if isinstance(value, int | float) and not isinstance(value, bool):
                total[key] = total.get(key, 0) + value
    return total


def usage_of_chat(chat_id: int) -> dict:
    return usage_sum(
        Message.objects.filter(chat_id=chat_id, role=Message.Role.ASSISTANT).values_list(
            "usage", flat=True
        )
    )


def usage_line(usage: dict | None) -> str:
    """One reply's footer: its usage_text and, where known, its speed_line:
    "1,234 tokens in · 56 out · $0.0012 · 42 tok/s · 0.8 s to first token"."""
    return " · ".join(part for part in (usage_text(usage), speed_line(usage)) if part)


def usage_text(usage: dict | None) -> str:
    """ "1,234 tokens in · 56 out · $0.0012", or "" when nothing was reported."""
    usage = usage or {}
    parts = []
    if "input_tokens" in usage:
        parts.append(f"{usage['input_tokens']:,} tokens in")
    if "output_tokens" in usage:
        out = f"{usage['output_tokens']:,}"
        parts.append(f"{out} out" if parts else f"{out} tokens out")
    if "cost" in usage:
        parts.append(cost_text(usage["cost"]))
    return " · ".join(parts)


def cost_text(cost: float) -> str:
    if cost <= 0:
        return "$0"
    if cost >= 0.1:
        return f"${cost:.2f}"
    # Small sums keep two significant digits: $0.00042, not $0.00.
    return f"${cost:.{1 - math.floor(math.log10(cost))}f}"


def chat_usage_line(chat_id: int) -> str:
    # A sum has no speed (speeds do not add up); usage_sum leaves them out anyway.
    return usage_text(usage_of_chat(chat_id))


def chat_usage_for(chat: Chat | None) -> str:
    return chat_usage_line(chat.pk) if chat is not None else ""
