"""The tools a chat's model may call, in one registry.

Why a registry: chats runs the tool loop, but apps above it (drafts, agents)
bring tools of their own, and chats must not import them. Each app registers
its tools when it starts (`AppConfig.ready()`); the chats app registers the
library and conversation tools when this package is imported. A tool is a
spec (what the model sees) and a function `(ctx, args) -> str` run as the
asking person.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from apps.chats.tools.context import PrivacyStop, ToolError, TurnContext
from apps.llm import ToolSpec

__all__ = ["PrivacyStop", "Tool", "ToolError", "register", "run_tool", "tool_spec", "tool_specs"]


@dataclass(frozen=True)
class Tool:
    spec: ToolSpec
    run: Callable[[TurnContext, dict], str]
    # Whether this turn offers the tool: e.g. only when the chat may use general
    # knowledge, or only in an agent chat. A call to a tool not offered is refused.
    offered: Callable[[TurnContext], bool] = lambda ctx: True


def tool_spec(
    name: str, description: str, properties: dict, required: list[str] | None = None
) -> ToolSpec:
    return ToolSpec(
        name=name,
        description=description,
        parameters={"type": "object", "properties": properties, "required": required or []},
    )


TOOLS: dict[str, Tool] = {}


def register(tool: Tool) -> None:
    TOOLS[tool.spec.name] = tool


# What a model marked "small model: search only" is offered.
SEARCH_ONLY = frozenset({"search_notes", "get_document"})


def _offered(tool: Tool, ctx: TurnContext) -> bool:
    if ctx.only_tools is not None and tool.spec.name not in ctx.only_tools:
        return False
    return tool.offered(ctx)


def tool_specs(ctx: TurnContext) -> list[ToolSpec]:
    return [t.spec for t in TOOLS.values() if _offered(t, ctx)]


def run_tool(ctx: TurnContext, name: str, arguments: str) -> tuple[str, bool]:
    """Run one tool call. Returns (content, is_error); a bad call is an error
    the model reads and can correct, never an exception out of the loop.
    PrivacyStop propagates: it ends the turn."""
    tool = TOOLS.get(name)
    if tool is None or not _offered(tool, ctx):
        available = ", ".join(spec.name for spec in tool_specs(ctx))
        return f"Unknown tool {name!r}. Available: {available}.", True
    try:
        args = json.loads(arguments or "{}")
    except json.JSONDecodeError as exc:
        return f"The arguments are not valid JSON ({exc.msg}); send a JSON object.", True
    if not isinstance(args, dict):
        return "The arguments must be a JSON object.", True
    try:
        return tool.run(ctx, args), False
    except ToolError as exc:
        return str(exc), True
    except (ValueError, TypeError) as exc:
        return f"{name} failed: {exc}", True
