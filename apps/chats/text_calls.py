"""What a small model writes instead of a proper reply, read by code.

- Tool calls written as text: a fenced ```json {"name", "arguments"}``` block
  (or `"function"` for the name; or the whole reply one such object, unfenced)
  (Qwen2.5-Coder does this when its chat template's tool format is not
  followed) or Qwen/Hermes `<tool_call>{…}</tool_call>` in the content. Only a
  call to a tool this turn offers counts; arguments may be an object or a
  JSON string. The call is taken out of the text. A call whose outer JSON is
  broken (the real model wrote `{["name": "search_notes", "arguments": {…}]}`)
  still counts when its tool's name and its arguments object can be read.
- A run-away reply: `repeating` says when the text has started to loop
  (the same stretch written over and over), so the runner stops it.
"""

from __future__ import annotations

import json
import re
import secrets

from apps.llm import ToolCall

_FENCED = re.compile(r"```(?:json|tool_call|tool)?\s*(\{.*?\})\s*```", re.S)
_TAGGED = re.compile(r"<tool_call>\s*(\{.*?\})\s*(?:</tool_call>|$)", re.S)


def calls_in_text(text: str, offered: set[str]) -> tuple[list[ToolCall], str]:
    """(the tool calls written in `text`, the text without them)."""
    bare = text.strip()
    if bare.startswith("{"):
        # The whole reply is one call, unfenced (the real model wrote this too).
        call = _call(bare, offered)
        if call is not None:
            return [call], ""
    calls: list[ToolCall] = []
    kept = text
    for pattern in (_TAGGED, _FENCED):
        for match in list(pattern.finditer(kept)):
            call = _call(match.group(1), offered)
            if call is not None:
                calls.append(call)
                kept = kept.replace(match.group(0), "", 1)
    if not calls:
        return [], text
    return calls, kept.strip()


def _call(raw: str, offered: set[str]) -> ToolCall | None:
    try:
        data = json.loads(raw)
    except json.JSONDecodeError:
        data = None
    if isinstance(data, dict):
        name, arguments = _named(data)
    else:
        name, arguments = _salvaged(raw, offered)
    if name not in offered:
        return None
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments or "{}")
        except json.JSONDecodeError:
            return None
    if not isinstance(arguments, dict):
        return None
    return ToolCall(f"call_text_{secrets.token_hex(4)}", name, json.dumps(arguments))


def _named(data: dict) -> tuple[object, object]:
    """(name, arguments) of a call written as {"name", "arguments"}, as
    {"function": "name", "arguments"} (the real model's other habit), or
    OpenAI-shaped, {"function": {"name", "arguments"}}."""
    function = data.get("function")
    if isinstance(function, dict):
        data = {**function, **{k: v for k, v in data.items() if k != "function"}}
        function = None
    name = data.get("name") or function
    return name, data.get("arguments", data.get("parameters", {}))


_NAME = re.compile(r'"(?:name|function)"\s*:\s*"([^"]+)"')
_ARGUMENTS = re.compile(r'"(?:arguments|parameters)"\s*:\s*')


def _salvaged(raw: str, offered: set[str]) -> tuple[object, object]:
    """(name, arguments) from a call whose JSON as a whole does not parse:
    exactly one offered tool named under "name"/"function", and the first
    "arguments" value read as JSON where it starts. Anything less is not a
    call (None, None): text that merely mentions a tool stays text."""
    names = {m.group(1) for m in _NAME.finditer(raw)} & offered
    found = _ARGUMENTS.search(raw)
    if len(names) != 1 or found is None:
        return None, None
    try:
        arguments, _ = json.JSONDecoder().raw_decode(raw, found.end())
    except json.JSONDecodeError:
        return None, None
    return names.pop(), arguments


REPEAT_WINDOW = 1200  # characters of the reply's end that are looked at
REPEAT_PIECE = 40  # a stretch this long…
REPEAT_TIMES = 4  # …written this many times in the window is a loop


def repeating(text: str) -> bool:
    """Has the reply started to loop? Its last REPEAT_PIECE characters occur
    REPEAT_TIMES times in its last REPEAT_WINDOW characters."""
    tail = text[-REPEAT_WINDOW:]
    piece = tail[-REPEAT_PIECE:]
    # A stretch of few distinct characters ("word word word", a table rule)
    # is layout or a list, not a loop of sentences.
    if len(tail) < REPEAT_PIECE * REPEAT_TIMES or len(set(piece)) < 12:
        return False
    return tail.count(piece) >= REPEAT_TIMES
