"""Everything the toolbox plugs into the chats, from ToolboxConfig.ready(): its
outside tools, as a source the chat registry asks afresh for every turn and call."""

from __future__ import annotations

from apps.chats.tools.registry import register_source
from apps.toolbox.chat_tools import needs_approval, outside_tools


def register_all() -> None:
    register_source(outside_tools, asks=needs_approval)
