"""Everything web search plugs into the chats, imported once by apps.core's
ready() (chats cannot import this app): the tool, the hold that puts a
private chat's call on its card and the composer's Web toggle. (The
extraction task the sandbox children run, `sandboxed`, is found by the same
core's discovery of `sandboxed` modules.)"""

from __future__ import annotations

from apps.chats.approvals import hold_register
from apps.chats.page_hooks import chat_page_hook_register
from apps.chats.tools.registry import register
from apps.websearch.cards import web_hold
from apps.websearch.chat_page import HOOK
from apps.websearch.tool import NAME, TOOL

register(TOOL)
hold_register(NAME, web_hold)
chat_page_hook_register(HOOK)
