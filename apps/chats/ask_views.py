"""The person's answers to the model's questions (the ask_user card): checked,
written to the card, and the waiting reply goes on at once."""

from __future__ import annotations

from asgiref.sync import sync_to_async
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.loader import render_to_string
from django.views.decorators.http import require_POST

from apps.chats.runner import reply_resume
from apps.chats.tools import ask
from apps.core.errors import JarvisError
from apps.core.refusals import refusal_swapped


@login_required
@require_POST
async def answer(request: HttpRequest, pk: int) -> HttpResponse:
    """Answer card `pk`: 404 when it is not the person's, 409 when it was
    already answered (or stopped), 400 with the reason for an answer the card
    does not allow; otherwise the answered card, and the reply resumes."""
    user = await request.auser()
    card = await sync_to_async(ask.ask_card_for)(user, pk)
    chat_id = card.message.chat_id  # loaded with the card: no query here
    try:
        await sync_to_async(ask.ask_resolve)(user=user, action=card, posted=request.POST)
    except ask.AlreadyAnswered as exc:
        if not request.htmx:
            return await _back(request, chat_id, str(exc))
        await sync_to_async(card.refresh_from_db)()
        return await _card(request, card, status=409, error=str(exc))
    except JarvisError as exc:
        if not request.htmx:
            return await _back(request, chat_id, str(exc))
        return await _card(request, ask.with_values(card, request.POST), status=400, error=str(exc))
    await reply_resume(card.message_id)
    if not request.htmx:  # the form posted without JavaScript: back to the chat
        return redirect("chats:detail", pk=chat_id)
    return await _card(request, card)


async def _back(request: HttpRequest, chat_id: int, reason: str) -> HttpResponse:
    """Without JavaScript: the chat page again, the reason among its messages."""
    await sync_to_async(messages.error)(request, reason)
    return redirect("chats:detail", pk=chat_id)


async def _card(request: HttpRequest, card, *, status: int = 200, error: str = "") -> HttpResponse:
    html = await sync_to_async(render_to_string)(
        "chats/_ask.html", {"action": card, "error": error}, request=request
    )
    response = HttpResponse(html, status=status)
    # The card again, in place, saying why (htmx swaps a refusal into its target).
    return refusal_swapped(response) if status != 200 else response
