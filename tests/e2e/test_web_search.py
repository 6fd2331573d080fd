"""End to end, in a real browser against a real daphne: in a private chat the
person ticks Web, the model's query waits on a card, Search sends it, and the
reply cites the web page with a chip that links to it and a web source line
that says when it was fetched."""

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
    return Reply(tool_calls=[("web_search", json.dumps({"query": query}))])


def test_a_private_chat_shows_the_query_then_cites_the_web_page(
    page, transactional_db, owner, local_model, llm
):
    person = grant_web_search(owner)
    with FakeSearch() as web:
        web.result("Bin collections change", "/pages/bins", "Holiday changes")
        SearchProvider.objects.create(
            name="Home SearXNG", kind="searxng", base_url=web.base_url, timeout_seconds=3
        )
        llm.queue(Reply(text="Hello."))
        chat, _ = in_a_thread(run_turn, person, "Hello")
        chat_mark_private(chat=chat)
        llm.queue(
            search_call(QUERY),
            Reply(text="I can look that up on the web: click Search on the card."),
            search_call("words the model chose"),
            Reply(text="The green bin moves to Tuesday [1]."),
        )
        # The daphne of this test may fetch from the fake (it listens on loopback).
        with daphne_server(JARVIS_FETCH_ALLOW_HOSTS=web.host_port) as url:
            errors = collect_errors(page)
            sign_in(page, url)
            page.goto(f"{url}/chat/{chat.pk}/")
            toggle = page.get_by_test_id("web-toggle").locator("input")
            toggle.check()
            page.fill("#composer-text", "When are the bins collected over the holidays?")
            page.get_by_role("button", name="Send").click()
            card = page.get_by_test_id("web-search-card")
            card.wait_for()
            assert card.get_by_test_id("web-query").inner_text() == f"“{QUERY}”"
            assert not toggle.is_checked()  # for that message only
            assert web.requests == []  # nothing left before the click
            screenshot(page, "web-search-card")

            card.get_by_test_id("web-search-go").click()
            page.wait_for_selector("text=Sent: searching the web")
            chip = page.locator("a.cite--web").first
            chip.wait_for()
            assert chip.get_attribute("href") == web.url("/pages/bins")
            source = page.get_by_test_id("web-source").first
            assert "Bin collections change" in source.inner_text()
            assert "fetched" in source.inner_text()
            screenshot(page, "web-search-cited")
            assert errors == []
    assert web.queries == [QUERY]
    assert PendingAction.objects.get(kind="web_search").status == "done"
