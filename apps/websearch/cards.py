"""The private chat's web search card (PendingAction kind web_search).

Search is a send: the card's button posts a message naming the card to the
chat's send endpoint, and that turn's `web_search` searches the card's query
(apps.websearch.tool). Don't is answered here, through the chats' card
endpoint (registered in apps.chats.services): the card is dismissed and
nothing is sent anywhere."""

from __future__ import annotations

from apps.chats.models import PendingAction

NOT_SENT = "Not searched: nothing was sent to the web."


def web_card_resolve(*, user, action: PendingAction, confirm: bool) -> str:
    # The caller checked that the card is in one of the person's chats.
    if action.status != PendingAction.Status.PENDING:
        return "This was already answered."
    if confirm:
        return "Click Search to send the search."
    updated = PendingAction.objects.filter(
        pk=action.pk, status=PendingAction.Status.PENDING
    ).update(status=PendingAction.Status.DISMISSED)
    return NOT_SENT if updated else "This was already answered."
