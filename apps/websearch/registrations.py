"""Everything web search plugs into the chats, from WebsearchConfig.ready():
the tool, the composer's Web toggle, the card's Don't, and the extraction
task the sandbox children run."""

from __future__ import annotations

from apps.chats.models import PendingAction
from apps.chats.page_hooks import chat_page_hook_register
from apps.chats.services import card_resolver_register
from apps.chats.tools.registry import register
from apps.websearch import sandboxed  # noqa: F401  (registers the sandbox task)
from apps.websearch.cards import web_card_resolve
from apps.websearch.chat_page import HOOK
from apps.websearch.tool import TOOL


def register_all() -> None:
    register(TOOL)
    chat_page_hook_register(HOOK)
    card_resolver_register(PendingAction.Kind.WEB_SEARCH, web_card_resolve)
