"""A private chat (it has read notes kept local) never searches the web on
the model's say-so: the tool is offered only for a message the person ticked
Web on, and the reply that calls it waits on a card showing the query.
Nothing leaves until they click Search; then exactly the query they saw is
sent and the same reply goes on with the results. Don't and Stop send
nothing; each card is answered once, only by its owner, and only with the
CSRF token. Through the real runner, the fake OpenAI-compatible server and
the fake SearXNG, all over real HTTP."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import async_to_sync

from apps.chats.approvals import WEB_STOPPED_NOTE
from apps.chats.models import Chat, Message, PendingAction
from apps.chats.runner import reply_resume
from apps.chats.services import chat_mark_private
from apps.chats.tools.context import ToolError, TurnContext
from apps.websearch.cards import DECLINED
from apps.websearch.tool import NOT_SHOWN, web_search
from tests.chats.conftest import run_turn
from tests.fakes.llm import Reply
from tests.websearch.conftest import finish, grant_web_search, signed_in

pytestmark = pytest.mark.django_db(transaction=True)

QUERY = "Meadow Lane bin collection holidays"


def offered_tools(llm, index: int) -> list[str]:
    return [t["function"]["name"] for t in llm.chat_requests[index].json.get("tools", [])]


def search_call(query: str) -> Reply:
    return Reply(
        text="Let me look that up.", tool_calls=[("web_search", json.dumps({"query": query}))]
    )


def tool_messages(llm) -> list[dict]:
    return [m for m in llm.chat_requests[-1].json["messages"] if m["role"] == "tool"]


@pytest.fixture
def private_chat(searcher, provider, local_model, llm):
    llm.queue(Reply(text="Hello."))
    chat, _ = run_turn(searcher, "Hello there")
    chat_mark_private(chat=chat)
    return chat


@pytest.fixture
def no_resume(monkeypatch):
    """Record the resume the card's answer asks for; the test resumes itself
    (the browser's answer resumes it on daphne's loop; the test client's
    loop ends with the request)."""
    resumed: list[int] = []

    async def record(message_id):
        resumed.append(message_id)

    monkeypatch.setattr("apps.websearch.views.reply_resume", record)
    return resumed


def resume(answer: Message) -> Message:
    async def go():
        await (await reply_resume(answer.pk)).task

    async_to_sync(go)()
    answer.refresh_from_db()
    return answer


def send(user, chat: Chat, started: list[int], **fields) -> Message:
    response = signed_in(user).post(f"/chat/{chat.pk}/send/", fields, HTTP_HX_REQUEST="true")
    assert response.status_code == 200, response.content.decode()
    return Message.objects.get(pk=started[-1])


def asked(searcher, chat, started, llm) -> tuple[Message, PendingAction]:
    """A ticked message whose reply calls web_search: it waits on the card."""
    llm.queue(search_call(QUERY), Reply(text="The green bin moves to Tuesday [1]."))
    answer = finish(send(searcher, chat, started, text="When are the bins collected?", web="1"))
    card = PendingAction.objects.get(kind="web_search", message=answer)
    return answer, card


def answer_card(user, card, search: bool, **options):
    return signed_in(user, **options).post(
        f"/chat/web/card/{card.pk}/", {"search": "1" if search else "0"}, HTTP_HX_REQUEST="true"
    )


def test_without_the_web_toggle_a_private_chat_offers_no_web_search(
    private_chat, searcher, web, llm
):
    llm.queue(Reply(text="I cannot look that up."))
    run_turn(searcher, "When are the bins collected?", chat=private_chat)
    assert "web_search" not in offered_tools(llm, -1)
    assert web.requests == []


def test_the_reply_waits_on_the_card_and_search_gives_it_the_results(
    private_chat, searcher, web, llm, started, no_resume
):
    web.result("Bin collections change", "/pages/bins", "Holiday changes")
    requests_before = len(llm.chat_requests)
    answer, card = asked(searcher, private_chat, started, llm)
    assert "web_search" in offered_tools(llm, -1)
    assert answer.parent.mentions == [{"kind": "web"}]
    # The reply waits: the model was asked once, nothing went to the provider.
    assert answer.status == Message.Status.WAITING
    assert len(llm.chat_requests) == requests_before + 1
    assert card.status == "pending" and card.payload["held"][0]["query"] == QUERY
    assert web.requests == []

    # A reload shows the card, with the query, while the reply waits.
    page = signed_in(searcher).get(f"/chat/{private_chat.pk}/").content.decode()
    assert 'data-testid="web-search-card"' in page and f"“{QUERY}”" in page
    assert 'data-testid="web-search-go"' in page and ">Don't</button>" in page
    assert 'data-testid="stop"' in page  # the reply is still in flight
    assert "Waiting for you to allow the web search below" in page  # not "approval of the calls"
    assert web.requests == []

    response = answer_card(searcher, card, search=True)
    assert response.status_code == 200
    shown = response.content.decode()
    assert 'data-testid="web-card-answered"' in shown
    assert "searched" in shown and "not searched" not in shown
    assert no_resume == [answer.pk]
    assert web.requests == []  # the search runs in the reply, not in the click

    reply = resume(answer)
    assert reply.pk == answer.pk and reply.status == Message.Status.DONE
    assert web.queries == [QUERY]  # exactly the words the card showed
    (result,) = tool_messages(llm)
    assert "Bin collections change" in result["content"]
    assert reply.text.endswith("The green bin moves to Tuesday [1].")
    assert reply.citations[0]["kind"] == "web"
    assert reply.citations[0]["url"] == web.url("/pages/bins")
    assert Message.objects.filter(chat=private_chat, role="assistant").count() == 2

    # A second click (another tab) changes nothing and sends nothing.
    again = answer_card(searcher, card, search=True)
    assert again.status_code == 409
    assert web.queries == [QUERY]
    page = signed_in(searcher).get(f"/chat/{private_chat.pk}/").content.decode()
    assert 'data-testid="web-card-answered"' in page and 'data-testid="web-search-go"' not in page


def test_don_t_tells_the_reply_the_person_declined(
    private_chat, searcher, web, llm, started, no_resume
):
    web.result("Bin collections change", "/pages/bins", "Holiday changes")
    answer, card = asked(searcher, private_chat, started, llm)
    llm.queue(Reply(text="I did not search the web; check the council's site."))
    response = answer_card(searcher, card, search=False)
    assert response.status_code == 200
    assert "not searched: you declined" in response.content.decode()

    reply = resume(answer)
    assert reply.pk == answer.pk and reply.status == Message.Status.DONE
    assert web.requests == []
    (result,) = tool_messages(llm)
    assert DECLINED in result["content"]
    assert all(c["kind"] != "web" for c in reply.citations)
    assert answer_card(searcher, card, search=True).status_code == 409
    assert web.requests == []


def test_stop_closes_the_card_and_nothing_is_sent(private_chat, searcher, web, llm, started):
    answer, card = asked(searcher, private_chat, started, llm)
    client = signed_in(searcher)
    assert client.post(f"/chat/{private_chat.pk}/stop/{answer.pk}/").status_code == 204
    answer.refresh_from_db()
    card.refresh_from_db()
    assert answer.status == Message.Status.STOPPED and WEB_STOPPED_NOTE in answer.notes
    assert card.status == "dismissed"
    page = client.get(f"/chat/{private_chat.pk}/").content.decode()
    assert "stopped, not searched" in page and 'data-testid="web-search-go"' not in page
    assert answer_card(searcher, card, search=True).status_code == 409
    assert web.requests == []


def test_another_person_cannot_answer_the_card(
    private_chat, searcher, outsider, web, llm, started, no_resume
):
    _, card = asked(searcher, private_chat, started, llm)
    stranger = grant_web_search(outsider)
    assert answer_card(stranger, card, search=True).status_code == 404
    card.refresh_from_db()
    assert card.status == "pending" and no_resume == []
    assert web.requests == []


def test_the_card_needs_the_csrf_token(private_chat, searcher, web, llm, started, no_resume):
    _, card = asked(searcher, private_chat, started, llm)
    assert answer_card(searcher, card, search=True, csrf=True).status_code == 403
    card.refresh_from_db()
    assert card.status == "pending" and no_resume == []
    assert web.requests == []


def test_a_private_call_without_the_person_s_yes_sends_nothing(
    private_chat, searcher, provider, web
):
    # Run outside a held round (the turn read local-only notes after the
    # round was decided): the tool itself refuses.
    ctx = TurnContext(
        user=searcher, chat=private_chat, cloud=False, notes_only=False, mentions=[{"kind": "web"}]
    )
    with pytest.raises(ToolError) as refused:
        web_search(ctx, {"query": QUERY})
    assert str(refused.value) == NOT_SHOWN
    assert web.requests == []


def test_a_round_that_also_asks_questions_shows_only_the_question_card(
    private_chat, searcher, web, llm
):
    questions = {"questions": [{"question": "Which bin?", "choices": ["Green", "Black"]}]}
    llm.queue(
        Reply(
            tool_calls=[
                ("ask_user", json.dumps(questions)),
                ("web_search", json.dumps({"query": QUERY})),
            ]
        )
    )
    _, answer = run_turn(
        searcher, "When are the bins collected?", chat=private_chat, mentions=[{"kind": "web"}]
    )
    assert answer.status == Message.Status.WAITING
    (card,) = PendingAction.objects.filter(message=answer, status="pending")
    assert card.kind == "ask_user"  # one card per round: the search is asked for again later
    (held,) = [c for c in card.payload["calls"] if c["name"] == "web_search"]
    assert held["verdict"] == "refuse" and "call it again" in held["reason"]
    assert web.requests == []
