"""Reads of chats, always scoped to their owner (another person's chat is a 404)."""

from __future__ import annotations

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from apps.chats.models import Chat, Message, PendingAction


def chats_for(*, user) -> QuerySet[Chat]:
    if not user.is_authenticated or not user.is_active:
        return Chat.objects.none()
    return Chat.objects.filter(owner=user).order_by("-pinned", "-updated_at", "-id")


def chat_for(*, user, pk: int) -> Chat:
    return get_object_or_404(chats_for(user=user), pk=pk)


def busy_message_for(*, chat: Chat) -> Message | None:
    return (
        chat.messages.filter(role=Message.Role.ASSISTANT, status__in=Message.IN_FLIGHT)
        .order_by("-id")
        .first()
    )


def approval_card_for(*, user, pk: int) -> PendingAction:
    return get_object_or_404(
        PendingAction.objects.select_related("message__chat").filter(
            message__chat__in=chats_for(user=user), kind=PendingAction.Kind.APPROVE_TOOLS
        ),
        pk=pk,
    )
