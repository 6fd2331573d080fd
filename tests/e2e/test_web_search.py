"""End to end, in a real browser against a real daphne: in a private chat the
person ticks Web, the reply waits on a card showing the model's query (also
after a reload), nothing leaves before Search; Search sends exactly that
query and the same reply goes on, citing the web page with a chip that links
to it and a web source line that says when it was fetched. Don't lets the
reply go on without the web; Stop closes the card unsent."""

from __future__ import annotations

import json

import pytest

from apps.chats.models import PendingAction
from apps.chats.services import chat_mark_private
from apps.websearch.models import SearchProvider
from tests.chats.conftest import run_turn
from tests.e2e.conftest import screenshot
from tests.e2e.test_chat import in_a_thread
from tests.fakes.llm import Reply
from tests.fakes.searxng import FakeSearch
from tests.support.browser import collect_errors, sign_in
from tests.support.processes import daphne_server
from tests.websearch.conftest import grant_web_search

pytestmark = pytest.mark.e2e

QUERY = "Meadow Lane bin collection holidays"


def search_call(query: str) -> Reply:
    return Reply(
        text="Let me look that up.", tool_calls=[("web_search", json.dumps({"query": query}))]
    )


def ask_in_private(page, person, llm, url, *replies: Reply) -> int:
    """Open a private chat, tick Web, send (the model then says `replies`);
    returns the chat's id once the reply waits on its web card."""
    llm.queue(Reply(text="Hello."))
    chat, _ = in_a_thread(run_turn, person, "Hello")
    chat_mark_private(chat=chat)
    llm.queue(*replies)
    sign_in(page, url)
    page.goto(f"{url}/chat/{chat.pk}/")
    toggle = page.get_by_test_id("web-toggle").locator("input")
    toggle.check()
    page.fill("#composer-text", "When are the bins collected over the holidays?")
    page.get_by_role("button", name="Send").click()
    page.get_by_test_id("web-search-go").wait_for(timeout=15_000)
    assert not toggle.is_checked()  # for that message only
    return chat.pk


@pytest.fixture
def web_person(transactional_db, owner, local_model):
    person = grant_web_search(owner)
    with FakeSearch() as web:
        web.result("Bin collections change", "/pages/bins", "Holiday changes")
        SearchProvider.objects.create(
            name="Home SearXNG", kind="searxng", base_url=web.base_url, timeout_seconds=3
        )
        # The daphne of this test may fetch from the fake (it listens on loopback).
        with daphne_server(JARVIS_FETCH_ALLOW_HOSTS=web.host_port) as url:
            yield person, web, url


def test_search_on_the_card_goes_on_with_the_same_reply_and_cites_the_page(page, web_person, llm):
    person, web, url = web_person
    errors = collect_errors(page)
    ask_in_private(
        page,
        person,
        llm,
        url,
        search_call(QUERY),
        Reply(text="The green bin moves to Tuesday [1]."),
    )
    reply = page.get_by_test_id("reply").last
    reply_id = reply.get_attribute("data-reply-id")
    card = page.get_by_test_id("web-search-card")
    assert card.get_by_test_id("web-query").inner_text() == f"“{QUERY}”"
    page.locator("[data-testid=stop]").wait_for()  # the reply waits, still in flight
    assert web.requests == []  # nothing left before the click
    screenshot(page, "web-search-card")

    page.reload()  # the card is still there, waiting
    card = page.get_by_test_id("web-search-card")
    assert card.get_by_test_id("web-query").inner_text() == f"“{QUERY}”"
    assert web.requests == []

    card.get_by_test_id("web-search-go").click()
    chip = page.locator("a.cite--web").first
    chip.wait_for(timeout=15_000)
    assert chip.get_attribute("href") == web.url("/pages/bins")
    # The same reply answered: no second message, the card reads searched.
    assert page.get_by_test_id("reply").last.get_attribute("data-reply-id") == reply_id
    assert page.get_by_test_id("reply").count() == 2  # the greeting and this one
    outcome = page.get_by_test_id("web-card-answered").inner_text().split("·")[-1].strip()
    assert outcome == "searched"
    source = page.get_by_test_id("web-source").first
    assert "Bin collections change" in source.inner_text()
    assert "fetched" in source.inner_text()
    page.locator("[data-testid=send]").wait_for()
    screenshot(page, "web-search-cited")
    assert errors == []
    assert web.queries == [QUERY]
    card_row = PendingAction.objects.get(kind="web_search")
    assert card_row.status == "done" and str(card_row.message_id) == reply_id


def test_don_t_lets_the_reply_go_on_without_the_web(page, web_person, llm):
    person, web, url = web_person
    errors = collect_errors(page)
    ask_in_private(
        page, person, llm, url, search_call(QUERY), Reply(text="No web search: ask the council.")
    )
    page.get_by_test_id("web-search-skip").click()
    page.get_by_test_id("answer").get_by_text("ask the council").wait_for(timeout=15_000)
    assert "you declined" in page.get_by_test_id("web-card-answered").inner_text()
    page.locator("[data-testid=send]").wait_for()
    assert page.locator("a.cite--web").count() == 0
    assert web.requests == []
    assert errors == []


def test_stop_closes_the_card_unsent(page, web_person, llm):
    person, web, url = web_person
    errors = collect_errors(page)
    ask_in_private(page, person, llm, url, search_call(QUERY))
    page.locator("[data-testid=stop]").click()
    page.get_by_text("stopped, not searched").wait_for(timeout=10_000)
    page.locator("[data-testid=send]").wait_for()
    assert page.get_by_test_id("web-search-go").count() == 0
    assert web.requests == []
    assert errors == []
