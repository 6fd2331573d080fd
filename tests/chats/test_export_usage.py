"""Exporting a chat as Markdown, copying an answer, and token use and cost
under each reply and in the chat's header."""

from __future__ import annotations

import html
import json
import re

import pytest

from apps.chats import services
from apps.library.ingest.sync import source_sync
from tests.chats.test_branches import finish
from tests.fakes.llm import Reply
from tests.support.fixtures import run_turn, signed_in

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def boiler(owner, vault, make_source, embedder):
    vault.write("home/boiler_2026-03.md", "# Boiler\n\nTomasz serviced the boiler in March 2026.\n")
    vault.write(
        "home/boiler_2026-10.md", "# Boiler\n\nPriya replaced the diverter valve in October 2026.\n"
    )
    source_sync(source=make_source(owner, vault), embedder=embedder)


@pytest.fixture
def cited_chat(owner, boiler, local_model, llm):
    llm.queue(
        Reply(tool_calls=[("search_notes", json.dumps({"query": "boiler valve service"}))]),
        Reply(text="Priya replaced the **valve** [1].", usage=(1200, 34), cost=0.0012),
    )
    chat, answer = run_turn(owner, "Who fixed the boiler?")
    assert answer.citations
    return chat, answer


def test_the_export_is_the_conversation_in_markdown_with_its_sources(owner, cited_chat, llm):
    chat, answer = cited_chat
    # An alternative the person paged away from is not in the export.
    llm.queue(Reply(text="An answer they did not keep."))
    finish(services.reply_regenerate(user=owner, chat=chat, reply=answer))
    services.branch_show(chat=chat, message=answer)

    response = signed_in(owner).get(f"/chat/{chat.pk}/export/")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/markdown; charset=utf-8"
    assert response["Content-Disposition"] == (
        f'attachment; filename="who-fixed-the-boiler-{chat.pk}.md"'
    )
    text = response.content.decode()
    assert text.startswith("# Who fixed the boiler?\n")
    assert "## You\n\nWho fixed the boiler?" in text
    assert "## Jarvis (home:local-7b)\n\nPriya replaced the **valve** [1]." in text
    citation = answer.citations[0]
    assert f"- [1] Boiler — {citation['path']} · {citation['date']}" in text
    assert "did not keep" not in text


def test_only_the_owner_can_export(member, outsider, cited_chat, client):
    chat, _ = cited_chat
    for person in (member, outsider):
        assert signed_in(person).get(f"/chat/{chat.pk}/export/").status_code == 404
    response = client.get(f"/chat/{chat.pk}/export/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_an_older_version_is_named_in_the_export(owner):
    chat, _, answer = services.turn_start(user=owner, chat=None, text="Boiler service?")
    answer.status, answer.text = "done", "In March [1]."
    answer.citations = [
        {
            "n": 1,
            "document_id": 1,
            "chunk_id": 1,
            "title": "Boiler",
            "path": "home/boiler_2026-03.md",
            "date": "2026-03-01",
            "is_latest": False,
            "superseded_by": "home/boiler_2026-10.md",
        }
    ]
    answer.save()
    text = signed_in(owner).get(f"/chat/{chat.pk}/export/").content.decode()
    assert (
        "- [1] Boiler — home/boiler_2026-03.md · 2026-03-01"
        " (older version; superseded by home/boiler_2026-10.md)"
    ) in text


def test_each_reply_shows_its_token_use_and_cost_and_the_header_the_chats(owner, cited_chat, llm):
    chat, _answer = cited_chat
    llm.queue(Reply(text="No cost reported here.", usage=(300, 20)))
    run_turn(owner, "Thanks", chat=chat)
    page = signed_in(owner).get(f"/chat/{chat.pk}/").content.decode()
    usages = re.findall(r'data-testid="usage">([^<]*)<', page)
    # The first reply made two model calls (search, answer); only the answer reported usage.
    assert usages == ["1,200 tokens in · 34 out · $0.0012", "300 tokens in · 20 out"]
    header = re.search(r'data-testid="chat-usage"[^>]*>([^<]*)<', page).group(1)
    assert header == "1,500 tokens in · 54 out · $0.0012"


def test_a_reply_of_several_model_calls_shows_their_total(owner, boiler, local_model, llm):
    llm.queue(
        Reply(
            tool_calls=[("search_notes", json.dumps({"query": "boiler valve"}))],
            usage=(400, 12),
            cost=0.0004,
        ),
        Reply(text="Priya replaced the valve [1].", usage=(900, 30), cost=0.0009),
    )
    chat, _ = run_turn(owner, "Who fixed the boiler?")
    page = signed_in(owner).get(f"/chat/{chat.pk}/").content.decode()
    assert re.findall(r'data-testid="usage">([^<]*)<', page) == [
        "1,300 tokens in · 42 out · $0.0013"
    ]


def test_a_reply_without_reported_usage_shows_none(owner, local_model, llm):
    llm.queue(Reply(text="Hello."))
    chat, _ = run_turn(owner, "hi")
    page = signed_in(owner).get(f"/chat/{chat.pk}/").content.decode()
    assert re.findall(r'data-testid="usage">([^<]*)<', page) == [""]
    assert "tokens" not in re.search(r'data-testid="chat-usage"[^>]*>([^<]*)<', page).group(1)


def test_the_copy_button_copies_the_answers_markdown_with_its_sources(owner, cited_chat):
    chat, answer = cited_chat
    page = signed_in(owner).get(f"/chat/{chat.pk}/").content.decode()
    source = re.search(
        rf'<textarea id="msg-{answer.pk}-markdown"[^>]*>(.*?)</textarea>', page, re.S
    )
    copied = html.unescape(source.group(1))
    assert copied.startswith("Priya replaced the **valve** [1].\n\nSources:\n\n- [1] Boiler — ")
    assert f'data-copy="msg-{answer.pk}-markdown"' in page
