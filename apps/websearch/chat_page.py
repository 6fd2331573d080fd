"""What web search adds to the chat page (apps/chats/page_hooks.py): the Web
toggle in the composer and its script and styles."""

from __future__ import annotations

from apps.chats.models import Chat
from apps.chats.page_hooks import ChatPageHook
from apps.websearch.selectors import active_provider, may_search_web


def web_toggle_context(user, chat: Chat | None) -> dict | None:
    provider = active_provider()
    if provider is None or not may_search_web(user=user):
        return None
    private = bool(chat is not None and chat.private)
    return {"provider": provider.name, "cloud": provider.is_cloud, "private": private}


HOOK = ChatPageHook(
    name="websearch",
    context=web_toggle_context,
    templates={"head": "websearch/_head.html", "composer": "websearch/_toggle.html"},
)
