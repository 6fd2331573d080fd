"""What the page shows of a reply, as whole rendered blocks.

A frame is a few top-level elements with ids (the reply's status line,
reasoning, tool activity, answer, sources, notes, confirmation cards, and the
composer's Send/Stop button); the htmx websocket extension swaps each into the
element with the same id. Whole blocks, not deltas: a frame that arrives late
or twice still leaves the page right."""

from __future__ import annotations

from django.template.loader import render_to_string

from apps.chats.reply import Reply

BLOCKS = ("status", "reasoning", "activity", "answer", "sources", "notes", "actions")


def render_blocks(reply: Reply, blocks=BLOCKS, *, composer: bool = False) -> str:
    parts = [
        render_to_string(f"chats/_reply.html#{block}", {"reply": reply, "oob": True})
        for block in blocks
    ]
    if composer:
        parts.append(
            render_to_string(
                "chats/_composer_actions.html",
                {
                    "busy_message": reply.pk if reply.in_flight else None,
                    "chat_id": reply.chat_id,
                    "oob": True,
                },
            )
        )
    return "".join(parts)
