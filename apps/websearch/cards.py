"""The private chat's web search card (PendingAction kind web_search): the
reply that asked waits on it, and the person's Search runs the query it shows.

In a private chat (or a turn that has read local-only notes) a `web_search`
call does not run on the model's say-so: the loop holds it (`web_hold`,
registered with apps.chats.approvals) before anything of the round runs, the
card shows the query and the provider, and the reply waits (status
"waiting", like an approval card; a reload shows the card). Search answers
the held call yes: the same reply goes on and the call runs with the
arguments the card showed, its results the call's tool result. Don't answers
no: the call's result says the person declined, and the reply goes on
without the web. Stop closes the card unsent. Nothing is sent to the
provider before the click; each card is answered once."""

from __future__ import annotations

from django.shortcuts import get_object_or_404

from apps.chats.approvals import AlreadyAnswered, Decision, Verdict, approvals_resolve
from apps.chats.models import Message, PendingAction
from apps.chats.selectors import chats_for
from apps.chats.tools.context import ToolError, TurnContext
from apps.websearch.selectors import active_provider, may_search_web
from apps.websearch.tool import clean_query, offered

DECLINED = (
    "Not searched: the person declined this web search, so nothing was sent to the web. "
    "Answer without the web (from the notes and what you know), say that the web was not "
    "searched, and do not call web_search again unless they ask."
)


def web_hold(ctx: TurnContext, arguments: dict) -> Decision | None:
    """A `web_search` call of a private turn, held for the person (its card
    shows the query); None lets it run as decided (a public chat's search, or
    a call the tool itself refuses and explains: not offered, no query)."""
    if not (ctx.chat.private or ctx.saw_local_only) or not ctx.web_requested:
        return None
    provider = active_provider()
    if provider is None or not may_search_web(user=ctx.user) or not offered(ctx):
        return None
    try:
        query = clean_query(arguments.get("query"))
    except ToolError:
        return None
    return Decision(
        Verdict.ASK,
        hold={
            "kind": PendingAction.Kind.WEB_SEARCH,
            "query": query,
            "provider": provider.name,
            "cloud": provider.is_cloud,
            "denied": DECLINED,
        },
    )


def web_card_for(user, pk: int) -> PendingAction:
    """The person's web search card `pk` (another person's, or none: 404)."""
    return get_object_or_404(
        PendingAction.objects.select_related("message__chat").filter(
            message__chat__in=chats_for(user=user), kind=PendingAction.Kind.WEB_SEARCH
        ),
        pk=pk,
    )


def web_card_answer(*, user, action: PendingAction, search: bool) -> None:
    """Search (`search`) or Don't on a waiting web card: the held calls are
    approved or declined and the reply is marked ready to go on (the caller
    resumes it). AlreadyAnswered when the card was answered (or stopped)
    before, or is one that no reply waits on."""
    if action.status != PendingAction.Status.PENDING or "calls" not in action.payload:
        raise AlreadyAnswered("This web search was already answered.")
    if action.message.status != Message.Status.WAITING:
        raise AlreadyAnswered("No reply waits on this web search any more.")
    approvals_resolve(user=user, action=action, approve=None if search else set())
