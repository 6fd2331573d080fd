"""OpenAI-compatible chat completions: Ollama, llama.cpp, vLLM, LM Studio, OpenRouter, OpenAI.

POST {base_url}/chat/completions with `stream: true`, read as server-sent events.
What the servers disagree on, and how it is read:
- Tool calls arrive piecemeal in `delta.tool_calls`, keyed by `index`: the id
  and name usually once (first chunk), the arguments JSON split over as many
  chunks as it takes, calls possibly interleaved. They are reassembled per index
  (never per name: a model may call one tool twice) and emitted as ToolCall once
  the stream ends; ToolCallStarted goes out as soon as a name is known. A call
  with no id gets one made up here (`call_<n>_<random>`), as does a call whose
  id repeats another's in the same reply.
- Reasoning comes as `delta.reasoning_content` (llama.cpp, vLLM, DeepSeek) or
  `delta.reasoning` (OpenRouter, Ollama, newer vLLM); when a server sends both
  they are the same text, so `reasoning_content` wins. Servers without a
  reasoning parser leave `<think>…</think>` inline in the content: a streaming
  splitter turns that into reasoning, holding back only the few characters that
  could be the start of a tag split across chunks. A `<think>` counts only at the
  very start of the reply (after whitespace); later it is text the model wrote.
- Usage comes in a last chunk with no choices (`stream_options.include_usage`);
  OpenRouter adds `usage.cost`. A server that reports none gives no Usage event.
- `finish_reason` "function_call" is read as "tool_calls", as is "stop" when the
  reply did call tools (some servers say "stop" regardless).
- `max_tokens` is sent (what every local server understands); put
  `max_completion_tokens` in `extra` for OpenAI's reasoning models and
  `max_tokens` is left out.
- A chunk carrying `error` (OpenRouter and vLLM report upstream failures inside
  a 200 stream) is a ProviderError. A stream that ends with neither `[DONE]` nor
  a finish_reason was cut off: ProviderError, after whatever text had arrived.
  A 200 with no chunk in it (an empty body, or `[DONE]` alone) is an empty
  reply, and a 200 web page (text/html) is said to be one (apps.llm.http).
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from typing import Any

import httpx

from apps.llm.capabilities import filled_in
from apps.llm.config import ModelInfo, ProviderConfig, ToolSpec
from apps.llm.errors import ProviderError, checked_key, logged, redact, secrets_of
from apps.llm.events import (
    Event,
    Finished,
    ReasoningDelta,
    TextDelta,
    ToolCall,
    ToolCallStarted,
    Usage,
)
from apps.llm.http import (
    SseEvent,
    WireRequest,
    cut_off,
    empty_reply,
    get_json,
    merge_extra,
    parse_json_event,
)
from apps.llm.transcript import Turn, to_openai

OPEN_TAG = "<think>"
CLOSE_TAG = "</think>"


class ThinkSplitter:
    """Splits streamed content into (reasoning, text) around a leading <think>…</think>."""

    def __init__(self) -> None:
        self._state = "start"  # start → (thinking →) text
        self._held = ""

    def feed(self, chunk: str) -> list[Event]:
        self._held += chunk
        events: list[Event] = []
        while self._held:
            if self._state == "start":
                stripped = self._held.lstrip()
                if not stripped:
                    return events  # only whitespace so far: could still precede <think>
                if stripped.startswith(OPEN_TAG):
                    self._held = stripped[len(OPEN_TAG) :]
                    self._state = "thinking"
                    continue
                if OPEN_TAG.startswith(stripped):
                    return events  # "<thi": wait for the rest
                self._state = "text"
                continue
            if self._state == "thinking":
                end = self._held.find(CLOSE_TAG)
                if end >= 0:
                    if end:
                        events.append(ReasoningDelta(self._held[:end]))
                    self._held = self._held[end + len(CLOSE_TAG) :].lstrip()
                    self._state = "after"
                    continue
                keep = _partial_suffix(self._held, CLOSE_TAG)
                if len(self._held) > keep:
                    events.append(ReasoningDelta(self._held[: len(self._held) - keep]))
                    self._held = self._held[len(self._held) - keep :]
                return events
            if self._state == "after":
                # The blank line after </think> is layout, not answer.
                self._held = self._held.lstrip()
                if not self._held:
                    return events
                self._state = "text"
                continue
            events.append(TextDelta(self._held))
            self._held = ""
        return events

    def finish(self) -> list[Event]:
        """What is still held when the stream ends (an unclosed <think> stays reasoning)."""
        held, self._held = self._held, ""
        if not held:
            return []
        if self._state == "thinking":
            return [ReasoningDelta(held)]
        if self._state == "start" and not held.strip():
            return []
        return [TextDelta(held)]


def _partial_suffix(text: str, tag: str) -> int:
    """How many trailing characters of `text` could begin `tag`."""
    for size in range(min(len(tag) - 1, len(text)), 0, -1):
        if tag.startswith(text[-size:]):
            return size
    return 0


@dataclass
class _Call:
    index: int
    id: str = ""
    name: str = ""
    arguments: str = ""
    started: bool = False


class Stream:
    def __init__(self, config: ProviderConfig) -> None:
        self.config = config
        self.splitter = ThinkSplitter()
        self.calls: dict[int, _Call] = {}
        self.ids: set[str] = set()
        self.usage: Usage | None = None
        self.finish_reason: str | None = None
        self.done = False
        self.chunks = 0  # JSON chunks seen: none at the end is an empty reply

    def feed(self, event: SseEvent) -> list[Event]:
        data = event.data
        if data.strip() == "[DONE]":
            self.done = True
            return []
        chunk = parse_json_event(self.config, data)
        if not isinstance(chunk, dict):
            return []
        self.chunks += 1
        if chunk.get("error"):
            raise self._stream_error(chunk["error"])
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            self.usage = Usage(
                input_tokens=_int(usage.get("prompt_tokens")),
                output_tokens=_int(usage.get("completion_tokens")),
                cost=_float(usage.get("cost")),
            )
        events: list[Event] = []
        for choice in chunk.get("choices") or []:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue  # n > 1 is never asked for
            delta = choice.get("delta") or {}
            thought = delta.get("reasoning_content") or delta.get("reasoning")
            if isinstance(thought, str) and thought:
                events.append(ReasoningDelta(thought))
            content = delta.get("content")
            if isinstance(content, str) and content:
                events.extend(self.splitter.feed(content))
            for piece in delta.get("tool_calls") or []:
                events.extend(self._tool_piece(piece))
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]
        return events

    def _tool_piece(self, piece: dict[str, Any]) -> list[Event]:
        index = piece.get("index")
        if not isinstance(index, int):
            # No index (some servers): the call with this id, else a new call.
            known = [c for c in self.calls.values() if piece.get("id") and c.id == piece["id"]]
            index = known[0].index if known else len(self.calls)
        call = self.calls.setdefault(index, _Call(index))
        if piece.get("id") and not call.id:
            call.id = str(piece["id"])
        function = piece.get("function") or {}
        if function.get("name") and not call.name:
            call.name = str(function["name"])
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            call.arguments += arguments
        elif isinstance(arguments, dict):  # a server that parsed them already
            call.arguments += json.dumps(arguments, ensure_ascii=False)
        if call.name and not call.started:
            call.started = True
            self._settle_id(call)
            return [ToolCallStarted(call.id, call.name)]
        return []

    def _settle_id(self, call: _Call) -> None:
        if not call.id or call.id in self.ids:
            call.id = f"call_{call.index}_{secrets.token_hex(6)}"
        self.ids.add(call.id)

    def _stream_error(self, error: Any) -> ProviderError:
        status: int | None = None
        message = error
        if isinstance(error, dict):
            message = error.get("message") or error.get("type") or "unknown error"
            code = error.get("code")
            status = code if isinstance(code, int) else None
        retryable = status is None or status == 429 or status >= 500
        text = f"{self.config.host} reported an error mid-reply"
        text += f" (HTTP {status})" if status else ""
        error = ProviderError(
            redact(f"{text}: {message}", secrets_of(self.config)),
            status=status,
            retryable=retryable,
        )
        return logged(self.config, error)

    def finish(self) -> list[Event]:
        """The events held back until the end; a stream that ended with neither
        [DONE] nor a finish_reason was cut off; one with no chunk at all (no
        events, or only [DONE]) is an empty reply, said as such."""
        if not self.chunks and self.finish_reason is None:
            raise empty_reply(self.config)
        if not self.done and self.finish_reason is None:
            raise cut_off(self.config)
        events = self.splitter.finish()
        for index in sorted(self.calls):
            call = self.calls[index]
            if not call.started:
                call.started = True
                self._settle_id(call)
            events.append(ToolCall(call.id, call.name, call.arguments))
        if self.usage is not None:
            events.append(self.usage)
        reason = self.finish_reason or "stop"
        if reason == "function_call" or (self.calls and reason == "stop"):
            reason = "tool_calls"
        events.append(Finished(reason))
        return events


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _float(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def is_waiting(event: SseEvent) -> bool:
    """An envelope chunk (the role, an empty content) is not the first token yet."""
    try:
        chunk = json.loads(event.data)
    except ValueError:
        return False
    if not isinstance(chunk, dict) or chunk.get("error") or chunk.get("usage"):
        return False
    for choice in chunk.get("choices") or []:
        if not isinstance(choice, dict):
            continue
        delta = choice.get("delta") or {}
        if choice.get("finish_reason") or any(
            delta.get(k) for k in ("content", "reasoning_content", "reasoning", "tool_calls")
        ):
            return False
    return True


def _headers(config: ProviderConfig) -> dict[str, str]:
    headers = {"Accept": "text/event-stream"}
    key = checked_key(config)
    if key:
        headers["Authorization"] = f"Bearer {key}"
    return headers


def request_body(
    config: ProviderConfig, *, system: str, turns: list[Turn], tools: list[ToolSpec]
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": config.model,
        "messages": to_openai(turns, system=system, model=config.model),
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if not (config.extra and "max_completion_tokens" in config.extra):
        body["max_tokens"] = config.max_tokens
    if tools:
        # An empty `tools` array is an error on several servers: only send one with tools in it.
        body["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.parameters,
                },
            }
            for t in tools
        ]
    body = merge_extra(body, config)
    if not tools:
        # A connection's tool_choice applies to requests that offer tools; a
        # server refuses one without them.
        body.pop("tool_choice", None)
    return body


def request(
    config: ProviderConfig, *, system: str, turns: list[Turn], tools: list[ToolSpec]
) -> WireRequest:
    return WireRequest(
        url=config.base_url.rstrip("/") + "/chat/completions",
        headers=_headers(config),
        body=request_body(config, system=system, turns=turns, tools=tools),
    )


async def describe_models(
    config: ProviderConfig, *, client: httpx.AsyncClient | None = None, ask_more: bool = True
) -> list[ModelInfo]:
    """The models from GET {base}/models; where that is a 404 (an Ollama base URL
    without /v1, or an old Ollama), Ollama's own GET {root}/api/tags. With
    `ask_more`, what the list leaves unknown is asked of llama.cpp's /props and
    Ollama's /api/show (apps.llm.capabilities)."""
    headers = {k: v for k, v in _headers(config).items() if k != "Accept"}
    base_url = config.base_url.rstrip("/")
    try:
        data = await get_json(config, base_url + "/models", headers=headers, client=client)
        entries = data.get("data") if isinstance(data, dict) else None
        described = _described(entries, "id")
    except ProviderError as first:
        if first.status != 404:
            raise
        root = base_url.removesuffix("/v1")
        try:
            data = await get_json(config, root + "/api/tags", headers=headers, client=client)
        except ProviderError:
            raise first from None
        described = _described(data.get("models") if isinstance(data, dict) else None, "name")
    if not ask_more:
        return described
    return await filled_in(config, described, headers=headers, client=client)


def _described(entries: Any, key: str) -> list[ModelInfo]:
    found: dict[str, ModelInfo] = {}
    for entry in entries if isinstance(entries, list) else []:
        info = ModelInfo.from_entry(entry, key) if isinstance(entry, dict) else None
        if info is not None and info.id not in found:
            found[info.id] = info
    return list(found.values())
