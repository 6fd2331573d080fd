"""Everything voice plugs into the chats, from VoiceConfig.ready(): its parts
of the chat page (the head script and the Dictate button)."""

from __future__ import annotations

from apps.chats.page_hooks import chat_page_hook_register
from apps.voice.chat_page import HOOKS


def register_all() -> None:
    for hook in HOOKS:
        chat_page_hook_register(hook)
