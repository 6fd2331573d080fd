"""Everything voice plugs into the chats, imported once by apps.core's
ready(): its parts of the chat page (the head script and the Dictate button;
chats sits below voice and cannot import it)."""

from __future__ import annotations

from apps.chats.page_hooks import chat_page_hook_register
from apps.voice.chat_page import HOOKS

for hook in HOOKS:
    chat_page_hook_register(hook)
