"""The model layer every app uses: one streamed call, two wire formats.

    config = provider_config_for(model_entry)          # or ProviderConfig(kind=…, …)
    builder = ReplyBuilder()
    async with contextlib.aclosing(stream_chat(config, system=..., turns=..., tools=...)) as events:
        async for event in events:      # TextDelta, ReasoningDelta, ToolCallStarted,
            builder.feed(event)         # ToolCall, OpaqueBlock, Usage, Finished
    turns.append(builder.turn())

`kind` "openai" is any OpenAI-compatible server (Ollama, llama.cpp, vLLM, LM
Studio, OpenRouter, OpenAI); "anthropic" is Anthropic's Messages API. Failures
are `ProviderError` (readable, key redacted, `.status`, `.retryable`). Stop a
reply by cancelling the task that iterates: the HTTP stream closes at once.
Iterating under `contextlib.aclosing` also closes it promptly when you `break`.

Modules: `config` (ProviderConfig, ToolSpec, provider_config_for), `events`
(what a reply streams as), `errors` (ProviderError, redaction), `http` (the one
HTTP path), `openai` / `anthropic` (the wire formats: a request and a Stream
that turns server-sent events into events), `transcript` (the provider-neutral
conversation), `selectors` (which models a person may use), `services`
(checking a connection). This package imports no app above it.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from types import ModuleType

import httpx

from apps.llm import anthropic, openai
from apps.llm.config import ModelInfo, ProviderConfig, ToolSpec, provider_config_for
from apps.llm.errors import LocalOnlyRefused, ProviderError, redact
from apps.llm.events import (
    Event,
    Finished,
    OpaqueBlock,
    ReasoningDelta,
    ReplyBuilder,
    TextDelta,
    ToolCall,
    ToolCallStarted,
    Usage,
)
from apps.llm.http import post_sse
from apps.llm.transcript import Turn, images_of, is_local_only

ADAPTERS: dict[str, ModuleType] = {"openai": openai, "anthropic": anthropic}
KINDS = tuple(ADAPTERS)


def adapter_for(config: ProviderConfig) -> ModuleType:
    adapter = ADAPTERS.get(config.kind)
    if adapter is None:
        raise ProviderError(
            f'unknown provider kind "{config.kind}" (expected one of {", ".join(KINDS)})'
        )
    return adapter


def stream_chat(
    config: ProviderConfig,
    *,
    system: str,
    turns: list[Turn],
    tools: list[ToolSpec],
    client: httpx.AsyncClient | None = None,
) -> AsyncIterator[Event]:
    """The reply to `turns` as a stream of events, ending with Usage (when the
    server reports it) and Finished; ProviderError when it fails. The request
    is made when iteration starts; cancelling the iterating task closes it.
    `client`: a shared httpx.AsyncClient (its own timeouts then apply to the
    network; `config.timeout` still bounds the wait for the first token). By
    default each call makes its own client.

    Privacy, at the last point before the wire: a local-only image (see
    `transcript`) never goes to a config that is not explicitly local;
    LocalOnlyRefused is raised here, before anything is sent."""
    adapter = adapter_for(config)  # an unknown kind fails here, before any iteration
    refuse_local_only_images(config, turns)
    return _events(adapter, config, system=system, turns=turns, tools=tools, client=client)


def refuse_local_only_images(config: ProviderConfig, turns: list[Turn]) -> None:
    if config.cloud and any(is_local_only(block) for block in images_of(turns)):
        raise LocalOnlyRefused(
            f"refused: an image from local-only content may not go to a cloud model ({config.host})"
        )


async def _events(
    adapter: ModuleType,
    config: ProviderConfig,
    *,
    system: str,
    turns: list[Turn],
    tools: list[ToolSpec],
    client: httpx.AsyncClient | None,
) -> AsyncIterator[Event]:
    request = adapter.request(config, system=system, turns=turns, tools=tools)
    stream = adapter.Stream(config)
    events = post_sse(
        config,
        request.url,
        headers=request.headers,
        body=request.body,
        client=client,
        waiting=adapter.is_waiting,
    )
    async with contextlib.aclosing(events):
        async for event in events:
            for out in stream.feed(event):
                yield out
            if stream.done:
                break
    for out in stream.finish():
        yield out


async def describe_models(
    config: ProviderConfig, *, client: httpx.AsyncClient | None = None
) -> list[ModelInfo]:
    """The models the server offers, in its order, with the context length and
    tool/vision support where it says (see each adapter for the endpoints)."""
    return await adapter_for(config).describe_models(config, client=client)


async def reply_text(
    config: ProviderConfig,
    *,
    system: str,
    turns: list[Turn],
    client: httpx.AsyncClient | None = None,
) -> str:
    """The whole text of a reply without tools: for one-shot questions such as
    describing an image. Same failures (and privacy refusal) as stream_chat."""
    builder = ReplyBuilder()
    events = stream_chat(config, system=system, turns=turns, tools=[], client=client)
    async with contextlib.aclosing(events):
        async for event in events:
            builder.feed(event)
    return builder.text


async def list_models(
    config: ProviderConfig, *, client: httpx.AsyncClient | None = None
) -> list[str]:
    """The model ids the server offers, in its order (one request: nothing
    more is asked about each)."""
    adapter = adapter_for(config)
    return [
        info.id for info in await adapter.describe_models(config, client=client, ask_more=False)
    ]


__all__ = [
    "KINDS",
    "Event",
    "Finished",
    "LocalOnlyRefused",
    "ModelInfo",
    "OpaqueBlock",
    "ProviderConfig",
    "ProviderError",
    "ReasoningDelta",
    "ReplyBuilder",
    "TextDelta",
    "ToolCall",
    "ToolCallStarted",
    "ToolSpec",
    "Usage",
    "describe_models",
    "list_models",
    "provider_config_for",
    "redact",
    "reply_text",
    "stream_chat",
]
