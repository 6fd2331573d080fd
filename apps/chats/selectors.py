"""Reads of chats, always scoped to their owner (another person's chat is a 404)."""

from __future__ import annotations

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from apps.chats.models import Chat, Message


def chats_of(user) -> QuerySet[Chat]:
    if not user.is_authenticated or not user.is_active:
        return Chat.objects.none()
    return Chat.objects.filter(owner=user).order_by("-pinned", "-updated_at", "-id")


def get_chat_for(user, pk: int) -> Chat:
    return get_object_or_404(chats_of(user), pk=pk)


def busy_message(chat: Chat) -> Message | None:
    return (
        chat.messages.filter(
            role=Message.Role.ASSISTANT,
            status__in=[Message.Status.PENDING, Message.Status.STREAMING],
        )
        .order_by("-id")
        .first()
    )
