"""What a page showing a chat needs: the chat page, and the editor's chat panel."""

from __future__ import annotations

from apps.chats import frames, tree
from apps.chats.folders import sidebar_context
from apps.chats.models import Chat, Message
from apps.chats.page_hooks import chat_page_hooks_for
from apps.chats.reply import Reply
from apps.chats.selectors import busy_message_for, chats_for
from apps.chats.starting_points import starting_points_for
from apps.chats.usage import chat_usage_for
from apps.instance.selectors import instance_settings
from apps.llm.selectors import default_model_for, models_for


def conversation_context(user, chat: Chat | None) -> dict:
    """One chat's messages as the page renders them (the branch shown, each
    message with its pager when it has alternatives) and the reply still running."""
    context = {
        "chat": chat,
        "configure_link": user.is_staff,
        "items": [],
        "busy_message": None,
        "compacted_upto": None,
    }
    if chat is not None:
        context["items"] = conversation_items(user, chat)
        busy = busy_message_for(chat=chat)
        context["busy_message"] = busy.pk if busy else None
        context["compacted_upto"] = chat.summary_upto
    return context


def conversation_items(user, chat: Chat) -> list[tuple]:
    """(message, its Reply or None) along the branch shown; each message
    carries `pager` ("2 of 3") when it has alternatives."""
    shape, messages = tree.shown(chat, prefetch=("actions",))
    items = []
    for m in messages:
        m.pager = shape.pager(m.pk)
        reply = None
        if m.role == Message.Role.ASSISTANT:
            reply = Reply.of(m, configure_link=user.is_staff)
            reply.pager = m.pager
        items.append((m, reply))
    return items


def regenerate_models(user, chat: Chat, usable: list | None = None) -> list:
    """The models a reply of `chat` may be regenerated with: the person's
    (`usable`, when the caller has them), and only local ones for a private chat."""
    models = list(models_for(user=user)) if usable is None else usable
    if chat.private:
        models = [m for m in models if not m.is_cloud]
    return models


def chat_header_context(user, chat: Chat) -> dict:
    """What templates/chats/_chat_state.html needs: the badge and the model picker."""
    usable = list(models_for(user=user))  # once: both parts read the catalogue
    return {
        "chat": chat,
        "user": user,
        "default_model": default_model_for(user=user, usable=usable),
        "regenerate_models": regenerate_models(user, chat, usable),
    }


def header_state(chat: Chat) -> tuple:
    """What of the chat the header shows (the badge, the model picker's choice)."""
    return (chat.private, chat.model_label)


def chat_header_frame(chat_id: int, *, unless: tuple | None = None) -> str:
    """The chat's header state as saved now, as a socket frame (apps.chats.frames).
    `unless`: a header_state the pages already show; "" when it is still that
    (rendering the header costs a reply's end several ms: the catalogue, the
    person's permissions, two partials)."""
    chat = Chat.objects.select_related("owner").filter(pk=chat_id).first()
    if chat is None or (unless is not None and header_state(chat) == unless):
        return ""
    return frames.render_header(chat_header_context(chat.owner, chat))


def chat_page_context(user, chat: Chat | None) -> dict:
    """The chat page: the conversation plus the chat list and the model picker,
    and what apps above chats add to it (page_hooks)."""
    chats = list(chats_for(user=user)[:200])
    usable = list(models_for(user=user))
    return {
        **conversation_context(user, chat),
        "chats": chats,
        **sidebar_context(user, chats),
        "current_chat_id": chat.pk if chat is not None else None,
        "starting_points": starting_points_for(user) if chat is None else [],
        **chat_page_hooks_for(user, chat),
        "models": usable,
        "default_model": default_model_for(user=user, usable=usable),
        "chats_kept": instance_settings().chats_kept,
        "chat_usage": chat_usage_for(chat),
        "regenerate_models": regenerate_models(user, chat, usable) if chat is not None else [],
    }
