"""Talking to language models: one streamed call, two wire formats.

    config = ProviderConfig(kind="openai", base_url="http://localhost:11434/v1",
                            api_key=None, model="qwen3:8b")
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

The transcript format the turns are in lives in `apps.chats.transcript`.
"""

from __future__ import annotations

from apps.chats.providers.base import (
    KINDS,
    Event,
    Finished,
    OpaqueBlock,
    ProviderConfig,
    ProviderError,
    ReasoningDelta,
    ReplyBuilder,
    TextDelta,
    ToolCall,
    ToolCallStarted,
    ToolSpec,
    Usage,
    list_models,
    redact,
    stream_chat,
)

__all__ = [
    "KINDS",
    "Event",
    "Finished",
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
    "list_models",
    "redact",
    "stream_chat",
]
