"""What the page shows of a reply, as whole rendered blocks.

A frame is a few top-level elements with ids (the reply's status line,
reasoning, tool activity, answer, sources, notes, confirmation cards, and the
composer's Send/Stop button); the htmx websocket extension swaps each into the
element with the same id. Whole blocks: a frame that arrives late or twice
still leaves the page right. The one exception is the text of an answer or a
reasoning while it streams, which frames append to (apps.chats.streaming,
with offsets, so a late or repeated append is harmless too)."""

from __future__ import annotations

from django.template.loader import render_to_string
from django.utils.html import format_html

from apps.chats.reply import Reply

# The parts of the chat's header a turn can change (templates/chats/_chat_state.html).
HEADER_PARTS = ("private", "model_choice")

BLOCKS = ("status", "reasoning", "activity", "answer", "sources", "notes", "actions", "meta")


def leaf_marker(leaf: int) -> str:
    """Tells every tab which reply the chat's branch ends with: a tab showing
    another branch (the person regenerated or paged in another tab) fetches
    the conversation again (static/js/chat.js)."""
    return format_html(
        '<span id="chat-leaf" data-leaf="{}" hidden hx-swap-oob="true"></span>', leaf
    )


def render_header(context: dict) -> str:
    """The chat header's "private" badge and model picker, to replace the
    page's: a turn that read local-only notes makes the chat private, and a
    regenerate on another model changes the chat's model, while the page is open.
    `context` is apps.chats.pages.chat_header_context's."""
    return "".join(
        render_to_string(f"chats/_chat_state.html#{part}", {**context, "oob": True})
        for part in HEADER_PARTS
    )


def render_block(reply: Reply, block: str) -> str:
    return render_to_string(f"chats/_reply.html#{block}", {"reply": reply, "oob": True})


def render_blocks(
    reply: Reply, blocks=BLOCKS, *, composer: bool = False, leaf: bool = False
) -> str:
    parts = [render_block(reply, block) for block in blocks]
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
        if reply.chat_usage is not None:
            parts.append(
                render_to_string(
                    "chats/_chat_usage.html", {"chat_usage": reply.chat_usage, "oob": True}
                )
            )
        if reply.header:
            parts.append(reply.header)
    if leaf:
        parts.append(leaf_marker(reply.pk))
    return "".join(parts)
