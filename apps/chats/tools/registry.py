"""The tools a chat's model may call, in one registry.

Why a registry: chats runs the tool loop, but apps above it (drafts, agents)
bring tools of their own, and chats must not import them. Each app registers
its tools from its `registrations` module, which apps.core's ready() imports
once every app is loaded; the chats app registers the library and
conversation tools when this package is imported, so they are in before any
app above can add one. A tool is a spec (what the model sees) and a function
`(ctx, args) -> str` run as the asking person.

Some tools are not known at import: an admin adds an outside tool, or offers
it to one group. An app above chats registers a *source* for them
(`register_source`): a function `(ctx) -> list[Tool]` asked afresh for every
turn's offer and for every call, so a tool taken away (or a person removed from
its group) is gone at the next call. A source may also say which of its tools
an approval policy must ask about (`needs_approval`); for a static tool the
answer is no here (an app whose tools write, like agents, says so in its own
policy).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass

from apps.chats.tools.context import PrivacyStop, ToolError, TurnContext
from apps.llm import ToolSpec

__all__ = [
    "PrivacyStop",
    "Tool",
    "ToolError",
    "needs_approval",
    "register",
    "register_source",
    "run_tool",
    "tool_spec",
    "tool_specs",
]

logger = logging.getLogger(__name__)


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


@dataclass(frozen=True)
class ToolSource:
    tools: Callable[[TurnContext], list[Tool]]
    # For a tool name: True when an approval policy that asks before changes
    # must ask before it runs, False when it only reads, None when the name is
    # not this source's.
    asks: Callable[[str], bool | None] | None = None


SOURCES: list[ToolSource] = []


def register_source(
    tools: Callable[[TurnContext], list[Tool]], *, asks: Callable[[str], bool | None] | None = None
) -> None:
    """Offer per-turn tools from an app above chats (once, from its `registrations`)."""
    if not any(source.tools is tools for source in SOURCES):
        SOURCES.append(ToolSource(tools, asks))


def _tools(ctx: TurnContext) -> dict[str, Tool]:
    """The static tools and what every source offers this turn; a static
    tool's name is never taken over by a source's tool."""
    found = dict(TOOLS)
    for source in SOURCES:
        try:
            extra = source.tools(ctx)
        except Exception:  # one broken source must not take every chat's tools with it
            logger.exception("tool source %r failed", source.tools)
            continue
        for tool in extra:
            if tool.spec.name in found:
                logger.warning("tool source %r: %s is taken", source.tools, tool.spec.name)
                continue
            found[tool.spec.name] = tool
    return found


def needs_approval(name: str) -> bool:
    """Whether an approval policy that asks before changes (an agent chat's Ask
    and Plan modes) must treat a call of `name` as one: what the tool's source
    says; a source that cannot tell fails closed."""
    if name in TOOLS:
        return False
    for source in SOURCES:
        if source.asks is None:
            continue
        try:
            verdict = source.asks(name)
        except Exception:
            logger.exception("tool source %r could not classify %s", source.tools, name)
            return True
        if verdict is not None:
            return verdict
    return False


# What a model marked "small model: search only" is offered.
SEARCH_ONLY = frozenset({"search_notes", "get_document"})


def _offered(tool: Tool, ctx: TurnContext) -> bool:
    if ctx.only_tools is not None and tool.spec.name not in ctx.only_tools:
        return False
    return tool.offered(ctx)


def tool_specs(ctx: TurnContext) -> list[ToolSpec]:
    return [t.spec for t in _tools(ctx).values() if _offered(t, ctx)]


def run_tool(ctx: TurnContext, name: str, arguments: str) -> tuple[str, bool]:
    """Run one tool call. Returns (content, is_error); a bad call is an error
    the model reads and can correct, never an exception out of the loop.
    PrivacyStop propagates: it ends the turn."""
    tool = _tools(ctx).get(name)
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
