"""What a page showing a chat needs: the chat page, and the editor's chat panel."""

from __future__ import annotations

from apps.chats.live import mark_interrupted
from apps.chats.models import Chat
from apps.chats.page_hooks import chat_page_hooks_for
from apps.chats.reply import Reply
from apps.chats.selectors import busy_message, chats_of
from apps.instance.selectors import instance_settings
from apps.llm.selectors import default_model_for, models_for


def conversation_context(user, chat: Chat | None) -> dict:
    """One chat's messages as the page renders them, and the reply still running."""
    context = {
        "chat": chat,
        "configure_link": user.is_staff,
        "items": [],
        "busy_message": None,
        "compacted_upto": None,
    }
    if chat is not None:
        mark_interrupted(chat)
        messages = list(chat.messages.prefetch_related("actions").order_by("pk"))
        context["items"] = [
            (m, Reply.of(m, configure_link=user.is_staff) if m.role == "assistant" else None)
            for m in messages
        ]
        busy = busy_message(chat)
        context["busy_message"] = busy.pk if busy else None
        context["compacted_upto"] = chat.summary_upto
    return context


def chat_page_context(user, chat: Chat | None) -> dict:
    """The chat page: the conversation plus the chat list and the model picker,
    and what apps above chats add to it (page_hooks)."""
    return {
        **conversation_context(user, chat),
        **chat_page_hooks_for(user, chat),
        "chats": list(chats_of(user)[:200]),
        "models": list(models_for(user)),
        "default_model": default_model_for(user),
        "chats_kept": instance_settings().chats_kept,
    }
