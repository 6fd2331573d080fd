"""How fast a reply was written: time to first token and tokens per second.

Measured on the client side, where the stream is read: `timed` wraps one
model call's event stream (apps.llm.stream_chat) and records, in the reply's
usage dict, the seconds from the request to the first thing the model wrote
(text, reasoning or a tool call) of the reply's first call (`first_token_s`),
and the seconds from each call's first piece to its last, added over the
reply's calls (`writing_s`: tool runs and the next call's wait in between are
not writing). The speed shown is the output tokens the endpoint reported over
`writing_s`; an endpoint that reports no usage gets no speed, never a guess
from characters. apps.chats.usage turns these into the reply's footer line.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable

from apps.llm import OpaqueBlock, ReasoningDelta, TextDelta, ToolCall, ToolCallStarted

# Below this much writing the pieces came together (a proxy that buffers, a
# reply of a few tokens): a rate would be the network's, not the model's, and
# the "first" token's wait would really be the whole reply's. Nothing is shown.
MIN_WRITING_S = 0.1
# What the model writes (Usage and Finished are the server's bookkeeping).
WRITTEN = (TextDelta, ReasoningDelta, ToolCallStarted, ToolCall, OpaqueBlock)


async def timed(
    stream: AsyncIterator, usage: dict, *, clock: Callable[[], float] = time.monotonic
) -> AsyncIterator:
    """`stream`'s events unchanged, timing recorded into `usage` as they pass.
    The request is made when iteration starts (stream_chat's contract), so
    the clock starts at the first ask for an event."""
    started = clock()
    first = last = None
    try:
        async for event in stream:
            if isinstance(event, WRITTEN):
                last = clock()
                if first is None:
                    first = last
                    usage.setdefault("first_token_s", round(first - started, 3))
            yield event
    finally:
        # Also on a stop or an error: what was written was written at this speed.
        if first is not None and last is not None:
            usage["writing_s"] = round(usage.get("writing_s", 0) + (last - first), 3)
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()


def tokens_per_second(usage: dict) -> float | None:
    """Output tokens over seconds of writing, where both are known and sensible."""
    tokens, seconds = usage.get("output_tokens"), usage.get("writing_s")
    if not _number(tokens) or not _number(seconds) or tokens <= 1 or seconds < MIN_WRITING_S:
        return None
    # The first token's own time is in first_token_s, not in writing_s.
    return (tokens - 1) / seconds


def speed_line(usage: dict | None) -> str:
    """ "42 tok/s · 0.8 s to first token", the rate alone, or ""."""
    usage = usage or {}
    rate = tokens_per_second(usage)
    if rate is None:
        # No reported tokens, or no measurable writing: neither figure means what it says.
        return ""
    parts = [f"{rate:.0f} tok/s" if rate >= 10 else f"{rate:.1f} tok/s"]
    first = usage.get("first_token_s")
    if _number(first) and first >= 0:
        seconds = f"{first:.1f}" if first < 10 else f"{first:.0f}"
        parts.append(f"{seconds} s to first token")
    return " · ".join(parts)


def _number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
