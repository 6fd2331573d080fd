"""The events a streamed reply arrives as, whatever the wire format, and the
builder that folds them into provider-neutral transcript blocks."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from apps.llm.transcript import Block, Turn


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class ReasoningDelta:
    text: str


@dataclass(frozen=True)
class ToolCallStarted:
    """A call's name is known (its arguments are still streaming): for the UI."""

    id: str
    name: str


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # the JSON text exactly as the model produced it, possibly malformed


@dataclass(frozen=True)
class OpaqueBlock:
    """Provider data to echo back verbatim on the same model (Anthropic thinking)."""

    provider: str
    model: str
    data: dict[str, Any]


@dataclass(frozen=True)
class Usage:
    input_tokens: int | None
    output_tokens: int | None
    cost: float | None = None  # in the provider's currency (OpenRouter: credits, i.e. USD)


@dataclass(frozen=True)
class Finished:
    stop_reason: str  # "stop" | "tool_calls" | "length" | whatever else the server said


Event = TextDelta | ReasoningDelta | ToolCallStarted | ToolCall | OpaqueBlock | Usage | Finished


@dataclass
class ReplyBuilder:
    """Folds a reply's events into transcript blocks (text and reasoning deltas
    joined into one block per run, calls and opaque blocks in arrival order)."""

    blocks: list[Block] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)  # the calls as events, in order
    usage: Usage | None = None
    stop_reason: str | None = None

    def feed(self, event: Event) -> None:
        if isinstance(event, TextDelta | ReasoningDelta):
            kind = "text" if isinstance(event, TextDelta) else "reasoning"
            if self.blocks and self.blocks[-1]["type"] == kind:
                self.blocks[-1]["text"] += event.text
            else:
                self.blocks.append({"type": kind, "text": event.text})
        elif isinstance(event, ToolCall):
            self.calls.append(event)
            self.blocks.append(
                {
                    "type": "tool_call",
                    "id": event.id,
                    "name": event.name,
                    "arguments": event.arguments,
                }
            )
        elif isinstance(event, OpaqueBlock):
            self.blocks.append(
                {
                    "type": "opaque",
                    "provider": event.provider,
                    "model": event.model,
                    "data": event.data,
                }
            )
        elif isinstance(event, Usage):
            self.usage = event
        elif isinstance(event, Finished):
            self.stop_reason = event.stop_reason

    @property
    def text(self) -> str:
        return "".join(b["text"] for b in self.blocks if b["type"] == "text")

    @property
    def reasoning(self) -> str:
        return "".join(b["text"] for b in self.blocks if b["type"] == "reasoning")

    @property
    def tool_calls(self) -> list[Block]:
        return [b for b in self.blocks if b["type"] == "tool_call"]

    def with_text_first(self, text: str) -> list[Block]:
        """The call's transcript with `text` (the answer as finally kept) in
        front of the calls and opaque blocks, in their arrival order; the
        reasoning stays out (providers do not take it back)."""
        rest = [dict(b) for b in self.blocks if b["type"] not in ("text", "reasoning")]
        return ([{"type": "text", "text": text}] if text.strip() else []) + rest

    def turn(self) -> Turn:
        return {"role": "assistant", "blocks": [dict(b) for b in self.blocks]}
