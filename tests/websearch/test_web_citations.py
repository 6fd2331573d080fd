"""Web sources as citations: the chip links to the page (escaped, opened
without a referrer) and differs from a note's; a web passage survives a
turn paused for approval (TurnContext.state/restore); the export names it."""

from __future__ import annotations

from apps.chats.citations import render_answer
from apps.chats.export import reply_markdown
from apps.chats.tools.context import TurnContext, WebPassage, WebSource

HOSTILE = 'Bins <script>alert(1)</script> "quoted"'


def web_passage(url: str = "https://council.example/bins?a=1&b=2") -> WebPassage:
    return WebPassage(
        result=WebSource(
            title=HOSTILE,
            url=url,
            text="Collections move to Tuesday.",
            fetched_at="2026-12-02T14:40:05+00:00",
            site="council.example",
            provider="Home SearXNG",
        )
    )


def context() -> TurnContext:
    return TurnContext(user=None, chat=None, cloud=False, notes_only=True)


def test_the_chip_links_to_the_page_and_says_when_it_was_fetched():
    ctx = context()
    passage = ctx.number_web(web_passage())
    html = str(render_answer("On Tuesday [1].", [passage.citation()]))
    assert 'class="cite cite--web"' in html
    assert 'href="https://council.example/bins?a=1&amp;b=2"' in html
    assert 'rel="noopener noreferrer nofollow"' in html
    assert "fetched 2026-12-02 14:40 UTC" in html
    assert "<script>" not in html and "&lt;script&gt;" in html


def test_the_same_page_twice_keeps_one_number():
    ctx = context()
    first = ctx.number_web(web_passage())
    again = ctx.number_web(web_passage())
    other = ctx.number_web(web_passage("https://example.org/other"))
    assert (first.n, again.n, other.n) == (1, 1, 2)
    assert "web page https://council.example/bins?a=1&b=2" in first.label()


def test_a_web_passage_survives_a_paused_turn():
    ctx = context()
    ctx.number_web(web_passage())
    resumed = context()
    resumed.restore(ctx.state())
    passage = resumed.passages[1]
    assert isinstance(passage, WebPassage)
    assert passage.citation() == ctx.passages[1].citation()
    assert resumed.number_web(web_passage()).n == 1


def test_the_export_lists_the_web_source_with_its_address():
    citation = context().number_web(web_passage()).citation()
    text = reply_markdown("On Tuesday [1].", [citation])
    assert "[1] " in text and "https://council.example/bins?a=1&b=2 · 2026-12-02" in text
