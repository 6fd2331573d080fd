"""The `remember` tool: the model proposes a memory; only the person's Keep
on the card stores it (they may edit it first, and choose whether cloud
models may see it). No tool stores a memory or changes any prompt."""

from __future__ import annotations

from apps.accounts.memories import clean_memory_text
from apps.chats.tools.context import ToolError, TurnContext
from apps.chats.tools.registry import Tool, register, tool_spec
from apps.core.errors import JarvisError


def remember(ctx: TurnContext, args: dict) -> str:
    try:
        text = clean_memory_text(str(args.get("text") or ""))
    except JarvisError as exc:
        raise ToolError(str(exc)) from exc
    ctx.cards.append(("remember", {"text": text}, "pending"))
    return (
        "A card asking the person whether to remember this is now shown. Nothing is stored "
        "until they click Keep (they may edit it first). Tell them it awaits their choice."
    )


register(
    Tool(
        tool_spec(
            "remember",
            "Propose remembering a short fact or lasting preference about the person (e.g. "
            "'is vegetarian', 'prefers answers in German') for their future chats. Use when "
            "they ask you to remember something. Nothing is stored until they click Keep.",
            {"text": {"type": "string", "description": "the fact, in one short sentence"}},
            ["text"],
        ),
        remember,
    )
)
