"""Conversation tools: recall earlier chats, and say when an answer will use
general knowledge rather than the notes."""

from __future__ import annotations

from apps.chats.history import search_history
from apps.chats.tools.context import ToolError, TurnContext, wrap
from apps.chats.tools.registry import Tool, register, tool_spec


def search_chat_history(ctx: TurnContext, args: dict) -> str:
    query = str(args.get("query") or "").strip()
    if not query:
        raise ToolError("search_chat_history needs a query")
    hits = search_history(ctx.user, query, exclude_chat=ctx.chat.pk, cloud_only=ctx.cloud)
    if not hits:
        return "No earlier conversation matches."
    lines = [f"[chat “{h.chat_title}”] Q: {h.question[:300]}\nA: {h.answer[:300]}" for h in hits]
    return wrap(lines, "Earlier conversations are recall cues; cite library passages, not these.")


def use_own_knowledge(ctx: TurnContext, args: dict) -> str:
    return (
        "Acknowledged: you may add general knowledge now. Say clearly which parts come from "
        "the notes (with citations) and which do not."
    )


register(
    Tool(
        tool_spec(
            "search_chat_history",
            "Search the person's earlier conversations (not this one).",
            {"query": {"type": "string"}},
            ["query"],
        ),
        search_chat_history,
    )
)

register(
    Tool(
        tool_spec(
            "use_own_knowledge",
            "Call this before answering from general knowledge rather than the notes.",
            {},
        ),
        use_own_knowledge,
        offered=lambda ctx: not ctx.notes_only,
    )
)
