"""The provider-neutral transcript a chat stores, and its conversion to each wire format.

A chat's history is stored in one shape whatever model produced it, so a chat
can move to another model mid-way (privacy rules permitting) and nothing has to
be rewritten. It is converted at the wire, on every request, by `to_openai` or
`to_anthropic`; nothing converts back, because the providers emit neutral
events (see `apps.llm`) that are folded straight into blocks.

Everything is plain JSON (dicts, lists, strings), so it round-trips through a
JSONField unchanged.

    Turn  = {"role": "user" | "assistant" | "tool", "blocks": [Block, ...]}
    Block = {"type": "text", "text": str}
          | {"type": "reasoning", "text": str}
          | {"type": "tool_call", "id": str, "name": str, "arguments": str}
          | {"type": "tool_result", "call_id": str, "name": str, "content": str,
             "is_error": bool}
          | {"type": "opaque", "provider": "anthropic" | "openai", "model": str,
             "data": dict}
          | {"type": "image", "media_type": "image/jpeg" | "image/png" | …,
             "data": str (base64), "local_only": bool}

- `reasoning` is what the model thought aloud. It is shown to the person
  (collapsed) and never sent back as text: replaying it wastes the window and
  no API expects it as content.
- `tool_call.arguments` is kept exactly as the model produced it, a JSON string
  that may be malformed, so the record says what the model really sent.
- `image` is a picture in a user turn (a figure or photo for a vision model).
  `local_only` says whether it comes from content that may not leave the
  house; a block without it counts as local-only, and `stream_chat` refuses
  to send a local-only image to a cloud model before any request is made.
  Sent as an `image_url` data URL part (OpenAI) or a base64 `image` block
  (Anthropic); never in assistant or tool turns.
- `tool` turns hold the `tool_result` blocks answering the assistant turn just
  before them (other blocks in a tool turn are ignored).
- `opaque` is provider data that must be echoed back verbatim to continue on
  the same model and means nothing to any other: Anthropic `thinking` blocks
  with their signature and `redacted_thinking` blocks. It is emitted only when
  both the provider and the model match exactly, and dropped otherwise, which
  is what a model switch needs. For `openai` the `data` keys are merged into
  the assistant message (for fields such as OpenRouter's `reasoning_details`).

What the conversion repairs, so a stored chat always makes a valid request:
- every assistant tool call gets a result right after it, in call order; a call
  with none (a turn stopped while its tools ran) gets an error result saying so,
  since both APIs refuse a call without its result;
- a result that answers no call of the preceding assistant turn is dropped
  (both APIs refuse those too);
- arguments that are not a JSON object (malformed, truncated, or a JSON value
  other than an object) are sent as `{"_invalid_arguments": "<the raw text>"}`:
  Anthropic needs an object, several OpenAI-compatible servers (llama.cpp,
  vLLM chat templates) parse the string and fail the whole request on bad
  JSON, and keeping the raw text lets the model see what it got wrong. Empty
  arguments (a call to a tool without parameters) are `{}`.
- turns left empty (an assistant turn that only reasoned) are skipped, and for
  Anthropic consecutive messages of one role are merged into one, as its
  alternation rule requires.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal, NotRequired, TypedDict

Block = dict[str, Any]


class Turn(TypedDict):
    role: Literal["user", "assistant", "tool"]
    blocks: list[Block]
    # Callers may keep their own keys on a turn (e.g. a message id); conversion ignores them.
    meta: NotRequired[dict[str, Any]]


INTERRUPTED_RESULT = "No result: the tool call did not complete."
INVALID_ARGUMENTS_KEY = "_invalid_arguments"

_ANTHROPIC_ID = re.compile(r"[^A-Za-z0-9_-]")


# --- building blocks ---------------------------------------------------------------


def text(value: str) -> Block:
    return {"type": "text", "text": value}


def reasoning(value: str) -> Block:
    return {"type": "reasoning", "text": value}


def tool_call(id: str, name: str, arguments: str) -> Block:
    return {"type": "tool_call", "id": id, "name": name, "arguments": arguments}


def tool_result(call_id: str, name: str, content: str, *, is_error: bool = False) -> Block:
    return {
        "type": "tool_result",
        "call_id": call_id,
        "name": name,
        "content": content,
        "is_error": is_error,
    }


def opaque(provider: str, model: str, data: dict[str, Any]) -> Block:
    return {"type": "opaque", "provider": provider, "model": model, "data": data}


def image(media_type: str, data: str, *, local_only: bool) -> Block:
    """A picture; `data` is base64. See the module docstring for `local_only`."""
    return {"type": "image", "media_type": media_type, "data": data, "local_only": local_only}


def user_turn(message: str) -> Turn:
    return {"role": "user", "blocks": [text(message)]}


# --- reading blocks ------------------------------------------------------------------


def text_of(blocks: list[Block]) -> str:
    """The visible text of some blocks: the text blocks, concatenated as they are.

    Blocks are joined without a separator because a reply's text is stored as
    it streamed; put any separation you want inside the blocks themselves."""
    return "".join(b.get("text", "") for b in blocks if b.get("type") == "text")


def reasoning_of(blocks: list[Block]) -> str:
    return "".join(b.get("text", "") for b in blocks if b.get("type") == "reasoning")


def tool_calls_of(blocks: list[Block]) -> list[Block]:
    return [b for b in blocks if b.get("type") == "tool_call"]


def tool_results_of(blocks: list[Block]) -> list[Block]:
    return [b for b in blocks if b.get("type") == "tool_result"]


def images_of(turns: list[Turn]) -> list[Block]:
    return [b for t in turns for b in t.get("blocks") or [] if b.get("type") == "image"]


def is_local_only(block: Block) -> bool:
    # Only an explicit False lets an image go to a cloud model.
    return block.get("local_only") is not False


def parse_arguments(arguments: str) -> dict[str, Any] | None:
    """The arguments as an object, `{}` for empty ones, None when they are not an object."""
    if not arguments or not arguments.strip():
        return {}
    try:
        value = json.loads(arguments)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def wire_arguments(arguments: str) -> dict[str, Any]:
    """The arguments to send back to a model (see the module docstring)."""
    value = parse_arguments(arguments)
    return {INVALID_ARGUMENTS_KEY: arguments} if value is None else value


# --- normalising ----------------------------------------------------------------------


def _paired(turns: list[Turn]) -> list[tuple[str, list[Block]]]:
    """(role, blocks) with each assistant turn's calls followed by exactly their results."""
    out: list[tuple[str, list[Block]]] = []
    i = 0
    while i < len(turns):
        role = turns[i]["role"]
        blocks = list(turns[i].get("blocks") or [])
        i += 1
        if role == "tool":
            continue  # results with no assistant turn before them answer nothing
        if role != "assistant":
            out.append((role, blocks))
            continue
        calls: list[Block] = []
        seen: set[str] = set()
        kept: list[Block] = []
        for block in blocks:
            if block.get("type") == "tool_call":
                if block.get("id") in seen:
                    continue  # a repeated id would pair one result with two calls
                seen.add(block.get("id", ""))
                calls.append(block)
            kept.append(block)
        results: dict[str, Block] = {}
        while i < len(turns) and turns[i]["role"] == "tool":
            for block in tool_results_of(turns[i].get("blocks") or []):
                results.setdefault(block.get("call_id", ""), block)
            i += 1
        out.append(("assistant", kept))
        if calls:
            answered = [
                results.get(call.get("id", ""))
                or tool_result(
                    call.get("id", ""), call.get("name", ""), INTERRUPTED_RESULT, is_error=True
                )
                for call in calls
            ]
            out.append(("tool", answered))
    return out


def _keeps_opaque(block: Block, provider: str, model: str) -> bool:
    return block.get("provider") == provider and block.get("model") == model


# --- OpenAI chat completions -----------------------------------------------------------


def to_openai(turns: list[Turn], *, system: str, model: str) -> list[dict[str, Any]]:
    """Chat-completions `messages`: the system prompt first (when not empty), one
    message per user/assistant turn, one `role: "tool"` message per result.

    An assistant message with calls but no text has `content: null`, as the API
    defines it. Reasoning is never sent; `opaque` blocks from this same model
    with provider "openai" have their `data` merged into the assistant message."""
    messages: list[dict[str, Any]] = []
    if system:
        messages.append({"role": "system", "content": system})
    for role, blocks in _paired(turns):
        if role == "tool":
            for block in blocks:
                content = block.get("content", "")
                if block.get("is_error"):
                    # The chat-completions format has no error flag; say it in the content.
                    content = f"Error: {content}"
                messages.append(
                    {"role": "tool", "tool_call_id": block.get("call_id", ""), "content": content}
                )
            continue
        content = text_of(blocks)
        if role == "user":
            pictures = [b for b in blocks if b.get("type") == "image"]
            if pictures:
                parts: list[dict[str, Any]] = [{"type": "text", "text": content}] if content else []
                parts.extend(
                    {"type": "image_url", "image_url": {"url": _data_url(picture)}}
                    for picture in pictures
                )
                messages.append({"role": "user", "content": parts})
            elif content:
                messages.append({"role": "user", "content": content})
            continue
        calls = [
            {
                "id": call.get("id", ""),
                "type": "function",
                "function": {
                    "name": call.get("name", ""),
                    "arguments": _openai_arguments(call.get("arguments", "")),
                },
            }
            for call in tool_calls_of(blocks)
        ]
        extra: dict[str, Any] = {}
        for block in blocks:
            if block.get("type") == "opaque" and _keeps_opaque(block, "openai", model):
                extra.update(block.get("data") or {})
        if not content and not calls and not extra:
            continue
        message: dict[str, Any] = {"role": "assistant", "content": content or None}
        if calls:
            message["tool_calls"] = calls
        for key, value in extra.items():
            message.setdefault(key, value)
        messages.append(message)
    return messages


def _data_url(picture: Block) -> str:
    return f"data:{picture.get('media_type', 'image/png')};base64,{picture.get('data', '')}"


def _openai_arguments(arguments: str) -> str:
    if parse_arguments(arguments) is None:
        return json.dumps(wire_arguments(arguments), ensure_ascii=False)
    # Valid: sent exactly as the model wrote it ("" becomes "{}", which servers parse).
    return arguments if arguments.strip() else "{}"


# --- Anthropic Messages ------------------------------------------------------------------


def anthropic_id(value: str) -> str:
    """Anthropic accepts tool ids of [A-Za-z0-9_-] only; ids made by other servers
    ("functions.search:0") are mapped, the same way for a call and its result."""
    return _ANTHROPIC_ID.sub("_", value) or "call"


def to_anthropic(turns: list[Turn], *, model: str) -> list[dict[str, Any]]:
    """Messages API `messages` (the system prompt is a separate request field).

    Content is always a list of typed blocks. Tool results go in a user message
    (all the results of one assistant turn together, before any text that
    follows). Opaque blocks are emitted only for provider "anthropic" and this
    exact `model`, first in their message (the API wants thinking before the
    text and tool calls of a reply, whatever order they were stored in).
    Empty or whitespace-only text blocks are left out: the API refuses them."""
    messages: list[dict[str, Any]] = []
    for role, blocks in _paired(turns):
        content: list[dict[str, Any]] = []
        if role == "tool":
            for block in blocks:
                result: dict[str, Any] = {
                    "type": "tool_result",
                    "tool_use_id": anthropic_id(block.get("call_id", "")),
                }
                if block.get("content"):
                    result["content"] = block["content"]
                if block.get("is_error"):
                    result["is_error"] = True
                content.append(result)
            role = "user"
        else:
            thinking: list[dict[str, Any]] = []
            for block in blocks:
                kind = block.get("type")
                if kind == "text":
                    if block.get("text", "").strip():
                        content.append({"type": "text", "text": block["text"]})
                elif kind == "image" and role == "user":
                    content.append(
                        {
                            "type": "image",
                            "source": {
                                "type": "base64",
                                "media_type": block.get("media_type", "image/png"),
                                "data": block.get("data", ""),
                            },
                        }
                    )
                elif role != "assistant":
                    continue
                elif kind == "tool_call":
                    content.append(
                        {
                            "type": "tool_use",
                            "id": anthropic_id(block.get("id", "")),
                            "name": block.get("name", ""),
                            "input": wire_arguments(block.get("arguments", "")),
                        }
                    )
                elif kind == "opaque" and _keeps_opaque(block, "anthropic", model):
                    thinking.append(dict(block.get("data") or {}))
            # With thinking on, a reply must start with its thinking blocks,
            # whatever order the blocks were stored in.
            content = thinking + content
        if not content:
            continue
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"].extend(content)
        else:
            messages.append({"role": role, "content": content})
    return messages
