"""A private chat (it has read notes kept local) never searches the web on
the model's say-so: the tool is offered only for a message the person ticked
Web on, a call shows its query on a card, nothing leaves until they click
Search, and then exactly the query they saw is sent."""

from __future__ import annotations

import json

import pytest

from apps.chats.models import Chat, Message, PendingAction
from apps.chats.services import chat_mark_private
from tests.chats.conftest import run_turn
from tests.fakes.llm import Reply
from tests.websearch.conftest import finish, grant_web_search, signed_in

pytestmark = pytest.mark.django_db(transaction=True)

QUERY = "Meadow Lane bin collection holidays"


def offered_tools(llm, index: int) -> list[str]:
    return [t["function"]["name"] for t in llm.chat_requests[index].json.get("tools", [])]


def search_call(query: str) -> Reply:
    return Reply(tool_calls=[("web_search", json.dumps({"query": query}))])


@pytest.fixture
def private_chat(searcher, provider, local_model, llm):
    llm.queue(Reply(text="Hello."))
    chat, _ = run_turn(searcher, "Hello there")
    chat_mark_private(chat=chat)
    return chat


def send(user, chat: Chat, started: list[int], **fields) -> Message:
    response = signed_in(user).post(f"/chat/{chat.pk}/send/", fields, HTTP_HX_REQUEST="true")
    assert response.status_code == 200, response.content.decode()
    return Message.objects.get(pk=started[-1])


def test_without_the_web_toggle_a_private_chat_offers_no_web_search(
    private_chat, searcher, web, llm
):
    llm.queue(Reply(text="I cannot look that up."))
    run_turn(searcher, "When are the bins collected?", chat=private_chat)
    assert "web_search" not in offered_tools(llm, -1)
    assert web.requests == []


def test_the_query_waits_on_a_card_and_nothing_is_sent_until_search(
    private_chat, searcher, web, llm, started
):
    web.result("Bin collections change", "/pages/bins", "Holiday changes")
    llm.queue(search_call(QUERY), Reply(text="Click Search on the card to look it up."))
    answer = finish(
        send(searcher, private_chat, started, text="When are the bins collected?", web="1")
    )
    assert "web_search" in offered_tools(llm, -2)
    assert answer.mentions == [] and answer.parent.mentions == [{"kind": "web"}]
    card = PendingAction.objects.get(kind="web_search")
    assert card.status == "pending" and card.payload["query"] == QUERY
    assert web.requests == []  # neither the provider nor any page was asked
    assert "waits for them to click Search" in llm.chat_requests[-1].json["messages"][-1]["content"]

    page = signed_in(searcher).get(f"/chat/{private_chat.pk}/").content.decode()
    assert 'data-testid="web-search-card"' in page and f"“{QUERY}”" in page
    assert 'data-testid="web-search-go"' in page and ">Don't</button>" in page

    # Search: a message naming the card; the model asks for other words, the card's are sent.
    llm.queue(search_call("something the model made up"), Reply(text="On Tuesday [1]."))
    reply = finish(
        send(
            searcher,
            private_chat,
            started,
            text=f"Search the web for “{QUERY}”",
            web_card=str(card.pk),
        )
    )
    assert web.queries == [QUERY]
    card.refresh_from_db()
    assert card.status == "done"
    assert reply.citations[0]["kind"] == "web"
    assert reply.citations[0]["url"] == web.url("/pages/bins")
    answered = signed_in(searcher).get(f"/chat/{private_chat.pk}/").content.decode()
    assert 'data-testid="web-card-answered"' in answered and "searched" in answered


def test_don_t_dismisses_the_card_and_it_cannot_be_used_after(
    private_chat, searcher, web, llm, started
):
    llm.queue(search_call(QUERY), Reply(text="Click Search to look it up."))
    finish(send(searcher, private_chat, started, text="When are the bins collected?", web="1"))
    card = PendingAction.objects.get(kind="web_search")
    response = signed_in(searcher).post(
        f"/chat/action/{card.pk}/", {"confirm": "0"}, HTTP_HX_REQUEST="true"
    )
    assert "Not searched: nothing was sent to the web." in response.content.decode()
    card.refresh_from_db()
    assert card.status == "dismissed"
    # A send naming the dismissed card searches nothing: the model gets a new card.
    llm.queue(search_call(QUERY), Reply(text="It waits for you."))
    finish(send(searcher, private_chat, started, text="Search anyway", web_card=str(card.pk)))
    assert web.queries == []
    fresh = PendingAction.objects.get(kind="web_search", status="pending")
    assert fresh.pk != card.pk


def test_another_person_can_neither_answer_nor_use_the_card(
    private_chat, searcher, outsider, web, llm, started
):
    llm.queue(search_call(QUERY), Reply(text="Click Search to look it up."))
    finish(send(searcher, private_chat, started, text="When are the bins collected?", web="1"))
    card = PendingAction.objects.get(kind="web_search")
    stranger = grant_web_search(outsider)
    assert signed_in(stranger).post(f"/chat/action/{card.pk}/", {"confirm": "0"}).status_code == 404
    # Their own private chat, naming the owner's card: nothing is searched.
    llm.queue(Reply(text="Hi."))
    theirs, _ = run_turn(stranger, "Hello")
    chat_mark_private(chat=theirs)
    llm.queue(search_call("their own words"), Reply(text="Waiting."))
    finish(send(stranger, theirs, started, text="Search", web_card=str(card.pk)))
    assert web.queries == []
    card.refresh_from_db()
    assert card.status == "pending"
