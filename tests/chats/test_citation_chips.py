"""Citation chips as the chat page shows them, after a real turn against the
fake model server: no chip inside code (inline or fenced), and a citation of
an older version is the "older version" chip (`cite--old`)."""

from __future__ import annotations

import json
import re

import pytest
from django.test import Client

from apps.library.ingest.sync import source_sync
from tests.fakes.llm import Reply
from tests.support.fixtures import run_turn

pytestmark = pytest.mark.django_db(transaction=True)

REPLY = (
    "Tomasz serviced it first [1], then Priya replaced the valve [2].\n\n"
    "In code the numbers stay code: `xs[1]` and\n\n"
    "```\nys[2] = xs[1]\n```\n"
)


@pytest.fixture
def boiler(owner, vault, make_source, embedder):
    vault.write("home/boiler_2026-03.md", "# Boiler\n\nTomasz serviced the boiler in March 2026.\n")
    vault.write(
        "home/boiler_2026-10.md", "# Boiler\n\nPriya replaced the diverter valve in October 2026.\n"
    )
    source_sync(source=make_source(owner, vault), embedder=embedder)


@pytest.fixture
def page(owner, boiler, local_model, llm):
    llm.queue(
        Reply(
            tool_calls=[
                (
                    "search_notes",
                    json.dumps({"query": "boiler service valve", "mode": "history"}),
                )
            ]
        ),
        Reply(text=REPLY),
    )
    chat, answer = run_turn(owner, "How has the boiler been looked after over time?")
    client = Client()
    client.force_login(owner)
    response = client.get(f"/chat/{chat.pk}/")
    assert response.status_code == 200
    return answer, response.content.decode()


def chips(html: str) -> dict[str, str]:
    """data-cite number → the chip's class, for every chip on the page."""
    found = {}
    for tag in re.findall(r"<a [^>]*data-cite=[^>]*>", html):
        number = re.search(r'data-cite="(\d+)"', tag).group(1)
        found[number] = re.search(r'class="([^"]*)"', tag).group(1)
    return found


def test_no_chip_is_rendered_inside_code(page):
    _, html = page
    # A fenced block without a language: highlighting would split "[1]" into
    # spans, and the test would pass whatever the rule did.
    code = re.findall(r"<code[^>]*>(.*?)</code>", html, re.S)
    assert "xs[1]" in code  # inline code, as written
    assert "ys[2] = xs[1]\n" in code  # the fenced block, as written
    assert not any("data-cite" in c for c in code)


def test_a_citation_of_an_older_version_is_the_older_version_chip(page):
    answer, html = page
    by_number = {str(c["n"]): c for c in answer.citations}
    old = [n for n, c in by_number.items() if not c["is_latest"]]
    latest = [n for n, c in by_number.items() if c["is_latest"]]
    assert old and latest  # the reply cites the March note and the October one
    shown = chips(html)
    for n in old:
        assert shown[n].split() == ["cite", "cite--old"]
    for n in latest:
        assert shown[n].split() == ["cite"]
