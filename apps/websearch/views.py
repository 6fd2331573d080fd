"""The web search card's Search and Don't (apps.websearch.cards): the answer
is written to the card and the reply that waits on it goes on at once."""

from __future__ import annotations

from asgiref.sync import sync_to_async
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.loader import render_to_string
from django.views.decorators.http import require_POST

from apps.chats.runner import reply_resume
from apps.core.errors import JarvisError
from apps.core.refusals import refusal_swapped
from apps.websearch.cards import web_card_answer, web_card_for


@login_required
@require_POST
async def card_answer(request: HttpRequest, pk: int) -> HttpResponse:
    """search=1 sends the card's query, anything else declines it. 404 when
    the card is not the person's, 409 when it was already answered; the
    answered card otherwise (or, without JavaScript, the chat again)."""
    user = await request.auser()
    card = await sync_to_async(web_card_for)(user, pk)
    chat_id = card.message.chat_id  # loaded with the card: no query here
    try:
        await sync_to_async(web_card_answer)(
            user=user, action=card, search=request.POST.get("search") == "1"
        )
    except JarvisError as exc:
        if not request.htmx:
            await sync_to_async(messages.error)(request, str(exc))
            return redirect("chats:detail", pk=chat_id)
        await sync_to_async(card.refresh_from_db)()
        return refusal_swapped(await _card(request, card, status=409, result=str(exc)))
    await reply_resume(card.message_id)
    if not request.htmx:
        return redirect("chats:detail", pk=chat_id)
    await sync_to_async(card.refresh_from_db)()
    return await _card(request, card)


async def _card(request, card, *, status: int = 200, result: str = "") -> HttpResponse:
    html = await sync_to_async(render_to_string)(
        "chats/_action.html", {"action": card, "result": result}, request=request
    )
    return HttpResponse(html, status=status)
