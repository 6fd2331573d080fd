"""The one Markdown path: what a note, a web page or a model reply can put on a page."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from apps.core.markdown import render_markdown


@pytest.mark.parametrize(
    "source",
    [
        "<script>alert(1)</script>",
        '<img src="x" onerror="alert(1)">',
        "[click](javascript:alert(1))",
        '<iframe src="https://evil.example"></iframe>',
        '<div hx-get="/admin/" hx-trigger="load">x</div>',
        '<a href="/x" onclick="steal()">x</a>',
    ],
)
def test_injection_is_inert(source):
    elements = _elements(render_markdown(source))
    tags = {tag for tag, _ in elements}
    attrs = [(name, value or "") for _, pairs in elements for name, value in pairs]
    assert not tags & {"script", "iframe", "div", "img"}
    assert not [name for name, _ in attrs if name.startswith(("on", "hx-"))]
    assert not [value for _, value in attrs if "javascript:" in value.lower()]


def _elements(html: str) -> list[tuple[str, list[tuple[str, str | None]]]]:
    """The live elements a browser would build (escaped text is not an element)."""
    found: list = []

    class Collector(HTMLParser):
        def handle_starttag(self, tag, attrs):
            found.append((tag, attrs))

    Collector().feed(html)
    return found


def test_links_open_without_referrer_and_external_images_are_not_loaded():
    html = render_markdown("[site](https://example.org) ![chart](https://tracker.example/p.png)")
    assert 'rel="noopener noreferrer"' in html
    assert "<img" not in html
    assert "[image: chart]" in html


def test_fenced_code_with_a_language_is_coloured():
    html = render_markdown('```python\ndef f(x):\n    return "<b>"  # note\n```')
    assert '<span class="hl-k">def</span>' in html
    assert '<span class="hl-nf">f</span>' in html
    # The string's markup is still text, inside a coloured span.
    assert "&lt;b&gt;" in html and "<b>" not in html


def test_unknown_or_missing_language_is_plain_escaped_code():
    html = render_markdown("```nolang\n<script>x</script>\n```\n\n```\n<b>y</b>\n```")
    assert "hl-" not in html
    assert "&lt;script&gt;x&lt;/script&gt;" in html
    assert "&lt;b&gt;y&lt;/b&gt;" in html


def test_highlight_keeps_only_classes_never_styles():
    html = render_markdown("```html\n<p style='color:red' onclick='x()'>hi</p>\n```")
    elements = _elements(html)
    assert {tag for tag, _ in elements} == {"pre", "code", "span"}
    assert {name for _, pairs in elements for name, _ in pairs} == {"class"}
