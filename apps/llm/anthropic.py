"""Anthropic's Messages API, streamed.

POST {base_url}/v1/messages (a base URL that already ends in /v1 is accepted
too) with `x-api-key`, `anthropic-version: 2023-06-01`, `stream: true`, the system
prompt as the top-level `system` field and tools as {name, description, input_schema}.

The stream is a sequence of typed events; what each becomes:
- message_start: input tokens (cache reads and writes included, so the figure
  is the context the model saw) and the first output count;
- content_block_start/delta/stop per content block:
  text → TextDelta; tool_use → ToolCallStarted at start, ToolCall at stop with
  the accumulated input_json_delta text as arguments ("{}" when the tool took
  none); thinking → ReasoningDelta as it streams, then at stop an OpaqueBlock
  {"type": "thinking", "thinking", "signature"} to echo back on this model;
  redacted_thinking → OpaqueBlock {"type": "redacted_thinking", "data"};
  block types this adapter does not know are ignored;
- message_delta: stop_reason and the running output count;
- message_stop: Usage, then Finished ("end_turn"/"stop_sequence" → "stop",
  "tool_use" → "tool_calls", "max_tokens" → "length", others as given);
- ping: nothing (a keep-alive; it does not count as the first token);
- error: ProviderError (overloaded and api errors are retryable).
A stream that ends without message_stop was cut off: ProviderError, after what
had arrived. Anthropic reports no cost, so Usage.cost is None.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import httpx

from apps.llm.config import ModelInfo, ProviderConfig, ToolSpec
from apps.llm.errors import ProviderError, checked_key, logged, redact, secrets_of
from apps.llm.events import (
    Event,
    Finished,
    OpaqueBlock,
    ReasoningDelta,
    TextDelta,
    ToolCall,
    ToolCallStarted,
    Usage,
)
from apps.llm.http import SseEvent, WireRequest, cut_off, get_json, merge_extra, parse_json_event
from apps.llm.transcript import Turn, to_anthropic

API_VERSION = "2023-06-01"

STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
}

# Error types in the stream, with the HTTP status the same error has as a response.
ERROR_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "overloaded_error": 529,
}


@dataclass
class _Block:
    type: str
    id: str = ""
    name: str = ""
    parts: list[str] = field(default_factory=list)
    signature: str = ""
    start: dict[str, Any] = field(default_factory=dict)


class Stream:
    def __init__(self, config: ProviderConfig) -> None:
        self.config = config
        self.blocks: dict[int, _Block] = {}
        self.input_tokens: int | None = None
        self.output_tokens: int | None = None
        self.stop_reason: str | None = None
        self.done = False

    def feed(self, sse: SseEvent) -> list[Event]:
        event = parse_json_event(self.config, sse.data)
        if not isinstance(event, dict):
            return []
        kind = event.get("type") or sse.event
        handler = getattr(self, f"_on_{kind}", None)
        return handler(event) if handler else []

    def _on_message_start(self, event: dict[str, Any]) -> list[Event]:
        self._count((event.get("message") or {}).get("usage"))
        return []

    def _on_content_block_start(self, event: dict[str, Any]) -> list[Event]:
        start = event.get("content_block") or {}
        block = _Block(type=str(start.get("type", "")), start=start)
        self.blocks[event.get("index", len(self.blocks))] = block
        if block.type == "text" and start.get("text"):
            return [TextDelta(start["text"])]
        if block.type == "thinking" and start.get("thinking"):
            block.parts.append(start["thinking"])
            return [ReasoningDelta(start["thinking"])]
        if block.type == "tool_use":
            block.id, block.name = str(start.get("id", "")), str(start.get("name", ""))
            return [ToolCallStarted(block.id, block.name)]
        return []

    def _on_content_block_delta(self, event: dict[str, Any]) -> list[Event]:
        block = self.blocks.get(event.get("index", -1))
        delta = event.get("delta") or {}
        kind = delta.get("type")
        if kind == "text_delta" and delta.get("text"):
            return [TextDelta(delta["text"])]
        if block is None:
            return []
        if kind == "input_json_delta":
            block.parts.append(delta.get("partial_json") or "")
        elif kind == "thinking_delta" and delta.get("thinking"):
            block.parts.append(delta["thinking"])
            return [ReasoningDelta(delta["thinking"])]
        elif kind == "signature_delta":
            block.signature += delta.get("signature") or ""
        return []

    def _on_content_block_stop(self, event: dict[str, Any]) -> list[Event]:
        block = self.blocks.get(event.get("index", -1))
        if block is None:
            return []
        if block.type == "tool_use":
            arguments = "".join(block.parts)
            if not arguments:
                arguments = json.dumps(block.start.get("input") or {})
            return [ToolCall(block.id, block.name, arguments)]
        if block.type == "thinking":
            data = {
                "type": "thinking",
                "thinking": "".join(block.parts),
                "signature": block.signature,
            }
            return [OpaqueBlock("anthropic", self.config.model, data)]
        if block.type == "redacted_thinking":
            data = {"type": "redacted_thinking", "data": block.start.get("data", "")}
            return [OpaqueBlock("anthropic", self.config.model, data)]
        return []

    def _on_message_delta(self, event: dict[str, Any]) -> list[Event]:
        self._count(event.get("usage"))
        reason = (event.get("delta") or {}).get("stop_reason")
        if reason:
            self.stop_reason = reason
        return []

    def _on_message_stop(self, event: dict[str, Any]) -> list[Event]:
        self.done = True
        events: list[Event] = []
        if self.input_tokens is not None or self.output_tokens is not None:
            events.append(Usage(self.input_tokens, self.output_tokens, None))
        reason = self.stop_reason or "end_turn"
        events.append(Finished(STOP_REASONS.get(reason, reason)))
        return events

    def finish(self) -> list[Event]:
        """A stream that ended without message_stop was cut off."""
        if not self.done:
            raise cut_off(self.config)
        return []

    def _on_error(self, event: dict[str, Any]) -> list[Event]:
        error = event.get("error") or {}
        kind = str(error.get("type", "error"))
        status = ERROR_STATUS.get(kind)
        retryable = kind in ("overloaded_error", "api_error", "rate_limit_error")
        message = (
            f"{self.config.host} reported an error mid-reply ({kind}): {error.get('message', '')}"
        )
        error = ProviderError(
            redact(message.strip().rstrip(":"), secrets_of(self.config)),
            status=status,
            retryable=retryable,
        )
        raise logged(self.config, error)

    def _count(self, usage: Any) -> None:
        if not isinstance(usage, dict):
            return
        parts = [
            usage.get(k)
            for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        ]
        numbers = [p for p in parts if isinstance(p, int)]
        if numbers:
            self.input_tokens = sum(numbers)
        if isinstance(usage.get("output_tokens"), int):
            self.output_tokens = usage["output_tokens"]


def is_waiting(event: SseEvent) -> bool:
    # The first token is the first content, not the envelope or a keep-alive.
    if event.event:
        return event.event in ("ping", "message_start")
    return event.data.replace(" ", "").startswith(('{"type":"ping"', '{"type":"message_start"'))


def _root(config: ProviderConfig) -> str:
    return config.base_url.rstrip("/").removesuffix("/v1")


def _headers(config: ProviderConfig) -> dict[str, str]:
    headers = {"anthropic-version": API_VERSION}
    key = checked_key(config)
    if key:
        headers["x-api-key"] = key
    return headers


def request_body(
    config: ProviderConfig, *, system: str, turns: list[Turn], tools: list[ToolSpec]
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": config.model,
        "max_tokens": config.max_tokens,
        "messages": to_anthropic(turns, model=config.model),
        "stream": True,
    }
    if system:
        body["system"] = system
    if tools:
        body["tools"] = [
            {"name": t.name, "description": t.description, "input_schema": t.parameters}
            for t in tools
        ]
    return merge_extra(body, config)


def request(
    config: ProviderConfig, *, system: str, turns: list[Turn], tools: list[ToolSpec]
) -> WireRequest:
    return WireRequest(
        url=_root(config) + "/v1/messages",
        headers={**_headers(config), "Accept": "text/event-stream"},
        body=request_body(config, system=system, turns=turns, tools=tools),
    )


async def describe_models(
    config: ProviderConfig, *, client: httpx.AsyncClient | None = None, ask_more: bool = True
) -> list[ModelInfo]:
    """The models from GET {base}/v1/models, following its pages (Anthropic
    has nothing more to ask: `ask_more` changes nothing)."""
    found: dict[str, ModelInfo] = {}
    after: str | None = None
    for _ in range(20):  # 20 pages of 1000: far beyond any real catalogue
        params = {"limit": 1000, **({"after_id": after} if after else {})}
        url = str(httpx.URL(_root(config) + "/v1/models", params=params))
        data = await get_json(config, url, headers=_headers(config), client=client)
        entries = data.get("data") if isinstance(data, dict) else None
        for entry in entries if isinstance(entries, list) else []:
            info = ModelInfo.from_entry(entry) if isinstance(entry, dict) else None
            if info is not None:
                found.setdefault(info.id, info)
        if not (isinstance(data, dict) and data.get("has_more") and data.get("last_id")):
            break
        after = str(data["last_id"])
    return list(found.values())
