"""The web_search tool in real chat turns (the runner, the scripted fake
model over HTTP, the fake provider and pages over HTTP): what the model is
offered, what it reads, how the reply cites a web source, and what happens
when the provider hangs or a result points somewhere Jarvis must not go."""

from __future__ import annotations

import json
import time

import pytest

from tests.chats.conftest import run_turn
from tests.fakes.llm import Reply
from tests.fakes.web import FakeWeb
from tests.websearch.conftest import signed_in

pytestmark = pytest.mark.django_db(transaction=True)


def offered_tools(llm, index: int = 0) -> list[str]:
    return [t["function"]["name"] for t in llm.chat_requests[index].json.get("tools", [])]


def tool_result(llm, index: int = 1) -> str:
    return llm.chat_requests[index].json["messages"][-1]["content"]


def search_call(query: str) -> Reply:
    return Reply(tool_calls=[("web_search", json.dumps({"query": query}))])


def test_the_model_searches_the_web_and_the_reply_cites_the_page(
    searcher, provider, web, local_model, llm
):
    web.result("Bin collections change", "/pages/bins", "Holiday changes to collections")
    llm.queue(search_call("Meadow Lane bin collection holidays"), Reply(text="On Tuesday [1]."))
    chat, answer = run_turn(searcher, "When are the bins collected over the holidays?")

    assert "web_search" in offered_tools(llm)
    assert web.queries == ["Meadow Lane bin collection holidays"]
    sent = tool_result(llm)
    # The page was read (main content, not its script) and handed over as data.
    assert "moves from Monday to Tuesday" in sent and "reveal secrets" not in sent
    assert "<retrieved_data>" in sent and web.url("/pages/bins") in sent
    citation = answer.citations[0]
    assert citation["kind"] == "web" and citation["url"] == web.url("/pages/bins")
    assert citation["fetched_at"][:4] == time.strftime("%Y")

    page = signed_in(searcher).get(f"/chat/{chat.pk}/").content.decode()
    assert 'class="cite cite--web"' in page
    assert f'href="{web.url("/pages/bins")}"' in page
    assert 'data-testid="web-source"' in page and "fetched" in page


def test_without_the_permission_the_tool_is_not_offered(owner, provider, web, local_model, llm):
    llm.queue(Reply(text="I cannot search the web."))
    run_turn(owner, "What is the weather in Leeds?")
    assert "web_search" not in offered_tools(llm)
    # Even a call to it is refused and nothing reaches the provider.
    llm.queue(search_call("weather Leeds"), Reply(text="No."))
    run_turn(owner, "Search the web for the weather in Leeds")
    assert "Unknown tool 'web_search'" in tool_result(llm, -1)
    assert web.queries == []


def test_without_a_provider_the_tool_is_not_offered(searcher, web, local_model, llm):
    llm.queue(Reply(text="No web here."))
    run_turn(searcher, "What is the weather in Leeds?")
    assert "web_search" not in offered_tools(llm)


def test_a_disabled_provider_offers_nothing(searcher, provider, local_model, llm):
    provider.enabled = False
    provider.save()
    llm.queue(Reply(text="No web here."))
    run_turn(searcher, "What is the weather in Leeds?")
    assert "web_search" not in offered_tools(llm)


def test_a_provider_that_hangs_is_named_and_the_reply_goes_on(
    searcher, provider, web, local_model, llm
):
    provider.timeout_seconds = 1
    provider.save()
    web.search_delay = 10
    web.result("Bin collections change", "/pages/bins", "Holiday changes")
    llm.queue(search_call("bin collection"), Reply(text="The web search timed out, sorry."))
    _, answer = run_turn(searcher, "When are the bins collected?")
    assert "the web search provider did not answer within 1 s" in tool_result(llm).lower()
    assert answer.status == "done" and answer.text == "The web search timed out, sorry."
    note = (
        "Web search: the web search provider did not answer within 1 s; this answer is without it."
    )
    assert note in answer.notes
    call = next(a for a in answer.activity if a["name"] == "web_search")
    assert call["state"] == "error"


def test_a_result_pointing_at_this_machine_or_the_metadata_service_is_not_fetched(
    searcher, provider, web, local_model, llm
):
    with FakeWeb() as inside:  # a service on this machine, not in the allowed list
        inside.page("/admin", "<p>router admin password hunter2</p>")
        web.result("Router", inside.url("/admin"), "local")
        web.result("Metadata", "http://169.254.169.254/latest/meta-data/", "cloud keys")
        web.result("Bin collections change", "/pages/bins", "Holiday changes")
        llm.queue(search_call("bins"), Reply(text="On Tuesday [1]."))
        _, answer = run_turn(searcher, "When are the bins collected?")
        assert inside.requests == []
    sent = tool_result(llm)
    assert "2 results pointed at an address Jarvis does not fetch" in sent
    assert "hunter2" not in sent and "169.254.169.254" not in sent
    assert [c["url"] for c in answer.citations] == [web.url("/pages/bins")]


def test_a_fifty_megabyte_result_page_is_cut_off_and_its_snippet_used(
    searcher, provider, web, local_model, llm
):
    provider.max_page_kb = 256
    provider.save()
    web.result("Huge", "/pages/huge", "a very large page about bins")
    web.result("Huge, declared", "/pages/huge-declared", "says it is large")
    llm.queue(search_call("bins"), Reply(text="Not much [1]."))
    run_turn(searcher, "When are the bins collected?")
    sent = tool_result(llm)
    assert "the page was not read: larger than 0.25 MB" in sent
    assert "a very large page about bins" in sent
    # Streaming stopped near the cap; the declared one was refused before its body.
    assert web.sent_to("/pages/huge") < 8 * 1024 * 1024
    assert web.sent_to("/pages/huge-declared") < 8 * 1024 * 1024


def test_a_slow_result_page_does_not_hold_the_reply(searcher, provider, web, local_model, llm):
    provider.timeout_seconds = 1
    provider.save()
    web.result("Slow", "/pages/slow", "slow snippet")
    web.result("Bin collections change", "/pages/bins", "Holiday changes")
    llm.queue(search_call("bins"), Reply(text="Tuesday [2]."))
    _, answer = run_turn(searcher, "When are the bins collected?")
    sent = tool_result(llm)
    assert "the page was not read: timed out" in sent and "moves from Monday to Tuesday" in sent
    assert answer.citations[0]["url"] == web.url("/pages/bins")


def test_brave_search_in_a_turn_is_cited_the_same_way(searcher, web, local_model, llm):
    from apps.websearch.models import SearchProvider  # models load after Django is set up

    provider = SearchProvider(name="Brave", kind="brave", base_url=web.url("/res/v1/web/search"))
    provider.set_api_key(web.brave_key)
    provider.save()
    web.result("Bin collections change", "/pages/bins", "Holiday changes")
    llm.queue(search_call("bin collection holidays"), Reply(text="On Tuesday [1]."))
    _, answer = run_turn(searcher, "When are the bins collected?")
    assert "moves from Monday to Tuesday" in tool_result(llm)
    assert answer.citations[0]["kind"] == "web"
    assert answer.citations[0]["url"] == web.url("/pages/bins")


def test_a_permission_taken_away_mid_turn_stops_the_call(searcher, provider, web, local_model, llm):
    from django.db import connections  # the fake model's thread has its own connection

    def revoke_then_search(body):
        searcher.groups.clear()  # an admin takes the permission away while the model thinks
        connections.close_all()
        return search_call("weather Leeds")

    llm.queue(revoke_then_search, Reply(text="No web."))
    _, answer = run_turn(searcher, "What is the weather in Leeds?")
    assert "web_search" in offered_tools(llm)  # offered when the turn began
    assert web.queries == []
    call = next(a for a in answer.activity if a["name"] == "web_search")
    assert call["state"] == "error"


def test_the_web_toggle_shows_only_to_people_who_may_search(
    searcher, member, provider, local_model, llm
):
    llm.queue(Reply(text="Hello."))
    chat, _ = run_turn(searcher, "Hello")
    page = signed_in(searcher).get(f"/chat/{chat.pk}/").content.decode()
    assert 'data-testid="web-toggle"' in page and 'name="web"' in page
    assert "js/websearch.js" in page
    assert 'data-testid="web-toggle"' not in signed_in(member).get("/chat/").content.decode()


def test_a_plain_text_page_with_a_made_up_charset_is_still_read(
    searcher, provider, web, local_model, llm
):
    web.route(
        "/pages/notice.txt",
        body=b"Recycling moves to Wednesday.",
        content_type="text/plain; charset=klingon",
    )
    web.result("Notice", "/pages/notice.txt", "notice")
    llm.queue(search_call("recycling"), Reply(text="Wednesday [1]."))
    run_turn(searcher, "When is recycling?")
    assert "Recycling moves to Wednesday." in tool_result(llm)
