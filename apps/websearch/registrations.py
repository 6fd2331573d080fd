"""Everything web search plugs into the chats, from WebsearchConfig.ready():
the tool, the hold that puts a private chat's call on its card, the
composer's Web toggle, and the extraction task the sandbox children run."""

from __future__ import annotations

from apps.chats.approvals import hold_register
from apps.chats.page_hooks import chat_page_hook_register
from apps.chats.tools.registry import register
from apps.websearch import sandboxed  # noqa: F401  (registers the sandbox task)
from apps.websearch.cards import web_hold
from apps.websearch.chat_page import HOOK
from apps.websearch.tool import NAME, TOOL


def register_all() -> None:
    register(TOOL)
    hold_register(NAME, web_hold)
    chat_page_hook_register(HOOK)
