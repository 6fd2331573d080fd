"""Everything the toolbox plugs into the chats, imported once by apps.core's
ready(): its outside tools, as a source the chat registry asks afresh for
every turn and call (chats cannot import the toolbox, which sits above it)."""

from __future__ import annotations

from apps.chats.tools.registry import register_source
from apps.toolbox.chat_tools import needs_approval, outside_tools

register_source(outside_tools, asks=needs_approval)
