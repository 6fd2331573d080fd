"""The draft preview: a whole document for a sandboxed srcdoc frame that runs nothing."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from apps.drafts.preview import CSP, CSV_MAX_ROWS, preview_document, preview_for


class _Page(HTMLParser):
    """The elements a browser would build, and the text of <title>."""

    def __init__(self) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.title = ""
        self._in_title = False

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))
        self._in_title = tag == "title"

    def handle_startendtag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        self._in_title = False

    def handle_data(self, data):
        if self._in_title:
            self.title += data

    def tags(self) -> list[str]:
        return [tag for tag, _ in self.elements]


def _page(html: str) -> _Page:
    page = _Page()
    page.feed(html)
    return page


def _assert_inert(page: _Page) -> None:
    assert not set(page.tags()) & {"script", "iframe", "object", "embed", "img", "link"}
    for tag, attrs in page.elements:
        for name, value in attrs.items():
            assert not name.startswith("on"), (tag, name)
            assert "javascript:" not in (value or "").lower(), (tag, name, value)
    # The one <style> is ours, in <head>.
    assert page.tags().count("style") == 1


def test_the_document_carries_the_csp_and_opens_links_elsewhere():
    html = preview_document("# Hello\n\nWorld", title="Notes")
    assert html.startswith("<!doctype html>")
    page = _page(html)
    metas = [attrs for tag, attrs in page.elements if tag == "meta"]
    assert {"charset": "utf-8"} in metas
    csp = [m["content"] for m in metas if m.get("http-equiv") == "Content-Security-Policy"]
    assert csp == [CSP]
    assert "default-src 'none'" in CSP and "script-src" not in CSP
    assert ("base", {"target": "_blank"}) in page.elements
    assert page.title == "Notes"
    assert "prefers-color-scheme: dark" in html


def test_a_hostile_title_is_escaped():
    html = preview_document("body", title='</title><script>alert(1)</script>"&')
    page = _page(html)
    assert page.title == '</title><script>alert(1)</script>"&'
    _assert_inert(page)


@pytest.mark.parametrize(
    "source",
    [
        "<script>alert(1)</script>",
        '<img src="x" onerror="alert(1)">',
        "[click](javascript:alert(1))",
        '<iframe src="https://evil.example"></iframe>',
        "<style>body{display:none}</style>",
        r"$\href{javascript:alert(1)}{x}$",
        "$<script>$",
        "$$\n\\text{</math><script>alert(1)</script>}\n$$",
        "![t](https://tracker.example/p.png)",
    ],
)
def test_injection_in_the_text_is_inert(source):
    _assert_inert(_page(preview_document(source, title="t")))


def test_markdown_gets_maths_and_source_lines():
    html = preview_for("notes.md", "# Title\n\nEnergy $E = mc^2$.\n\n$$\\frac{1}{$$\n\nAfter.")
    page = _page(html)
    lines = [(tag, attrs["data-line"]) for tag, attrs in page.elements if "data-line" in attrs]
    assert lines == [("h1", "0"), ("p", "2"), ("p", "4"), ("p", "6")]
    assert ("math", {"xmlns": "http://www.w3.org/1998/Math/MathML", "display": "inline"}) in (
        page.elements
    )
    assert '<code class="math-error">$$\\frac{1}{$$</code>' in html
    assert page.title == "notes.md"


@pytest.mark.parametrize("filename", ["letter.txt", "refs.bib", "paper.tex", "NOTES.TXT"])
def test_other_text_is_shown_exactly_as_written(filename):
    text = "# not a heading\n$x$ <script>alert(1)</script> *not em*\n"
    html = preview_for(filename, text)
    page = _page(html)
    assert "pre" in page.tags()
    assert not set(page.tags()) & {"h1", "math", "em"}
    assert "# not a heading\n$x$ &lt;script&gt;alert(1)&lt;/script&gt; *not em*" in html
    _assert_inert(page)


def test_csv_is_a_table_of_escaped_cells():
    html = preview_for("data.csv", 'name,note\nAda,"<b>x</b>, y"\nBob,<script>\n')
    page = _page(html)
    assert page.tags().count("th") == 2
    assert page.tags().count("td") == 4
    assert "<td>&lt;b&gt;x&lt;/b&gt;, y</td>" in html
    assert "b" not in page.tags()
    _assert_inert(page)


def test_a_long_csv_is_cut_short():
    text = "n\n" + "".join(f"{i}\n" for i in range(CSV_MAX_ROWS * 2))
    page = _page(preview_for("big.csv", text))
    assert page.tags().count("tr") == CSV_MAX_ROWS
    assert "more rows" in preview_for("big.csv", text)


def test_an_unparseable_csv_falls_back_to_text():
    text = 'a,"' + "x" * 200_000 + '"\n'  # past the csv module's field limit
    page = _page(preview_for("odd.csv", text))
    assert "pre" in page.tags() and "table" not in page.tags()
