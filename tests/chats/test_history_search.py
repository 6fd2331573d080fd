"""Searching past chats: relevance first, one line per chat, a snippet with the
matched words marked, never another person's chats."""

from __future__ import annotations

import pytest

from apps.chats.history import index_exchange, search_chats, search_history
from apps.chats.models import Chat, Message


def exchange(owner, title: str, question: str, answer: str) -> Chat:
    chat = Chat.objects.create(owner=owner, title=title)
    asked = Message.objects.create(chat=chat, role=Message.Role.USER, text=question)
    answered = Message.objects.create(chat=chat, role=Message.Role.ASSISTANT, text=answer)
    index_exchange(question=asked, answer=answered)
    return chat


@pytest.fixture
def chats(owner, member):
    # Created oldest first: recency must not decide the order.
    heat_pumps = exchange(
        owner,
        "Heating",
        "Are heat pumps worth it for our house?",
        "An air-source heat pump would need bigger radiators in the back bedroom.",
    )
    oven = exchange(owner, "Baking", "How long to heat the oven?", "About 15 minutes to 220°C.")
    pumps = exchange(owner, "Garden", "Which pond pumps are quiet?", "The solar pumps are quiet.")
    other = exchange(member, "Mine", "heat pumps grant", "The boiler upgrade scheme pays £7,500.")
    return heat_pumps, oven, pumps, other


def test_an_exchange_with_every_word_ranks_above_ones_with_some(owner, chats):
    heat_pumps, oven, pumps, _ = chats
    hits = search_history(owner, "heat pumps")
    assert hits[0].chat_id == heat_pumps.pk
    assert {h.chat_id for h in hits[1:]} == {oven.pk, pumps.pk}


def test_the_chat_list_search_shows_a_snippet_with_the_matched_words(owner, chats, client):
    heat_pumps, *_ = chats
    first = search_chats(owner, "heat pumps")[0]
    assert first.chat == heat_pumps
    marked = [text.lower() for text, matched in first.snippet if matched]
    assert "heat" in marked and "pumps" in marked
    client.force_login(owner)
    html = client.get("/chat/search/?q=heat+pumps").content.decode()
    assert html.index("Heating") < html.index("Baking") and html.index("Heating") < html.index(
        "Garden"
    )
    assert 'data-testid="chat-snippet"' in html
    assert "<mark>heat</mark>" in html.lower() and "<mark>pumps</mark>" in html.lower()


def test_a_snippet_is_escaped(owner, client):
    exchange(owner, "Markup", "what about <script>alert(1)</script> heat pumps", "none")
    client.force_login(owner)
    html = client.get("/chat/search/?q=heat+pumps").content.decode()
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;" in html


def test_another_persons_chats_never_come_back(owner, member, chats):
    *_, other = chats
    assert other.pk not in {h.chat_id for h in search_history(owner, "heat pumps grant")}
    assert other.pk not in {h.chat.pk for h in search_chats(owner, "heat pumps grant")}
    assert [h.chat_id for h in search_history(member, "heat pumps")] == [other.pk]
