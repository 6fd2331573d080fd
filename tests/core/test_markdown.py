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


@pytest.mark.parametrize(
    "source",
    [
        "![page](/library/doc/7/page/1.png)",  # a shared note firing renders for every reader
        "![page](//evil.example/p.png)",  # protocol-relative: external after all
        "![page](attachments/photo.png)",  # relative: resolves into Jarvis's own URLs
    ],
)
def test_no_image_is_ever_loaded_by_the_reader(source):
    html = render_markdown(source)
    assert "<img" not in html
    assert "[image: page]</a>" in html
    assert [tag for tag, _ in _elements(html)] == ["p", "a"]


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


# --- Maths and source lines (the draft preview) ---------------------------------------------


def _inert(html: str) -> None:
    elements = _elements(html)
    tags = {tag for tag, _ in elements}
    attrs = [(name, value or "") for _, pairs in elements for name, value in pairs]
    assert not tags & {"script", "iframe", "div", "img", "style", "maction", "annotation-xml"}
    assert not [name for name, _ in attrs if name.startswith(("on", "hx-", "xlink"))]
    assert not [value for _, value in attrs if "javascript:" in value.lower()]


def test_maths_is_off_by_default():
    html = render_markdown("Inline $x^2$ and\n\n$$\\frac{1}{2}$$")
    assert "<math" not in html
    assert "$x^2$" in html


def test_inline_and_display_maths_become_mathml():
    html = render_markdown("Area $\\pi r^2$ here.\n\n$$\n\\sum_{i=0}^{n} i\n$$\n", math=True)
    maths = [dict(attrs) for tag, attrs in _elements(html) if tag == "math"]
    assert [m.get("display") for m in maths] == ["inline", "block"]
    assert "<mi>π</mi>" in html
    # Display maths puts the sum's limits above and below, as LaTeX does.
    assert "<munderover>" in html
    assert "$" not in html


@pytest.mark.parametrize(
    ("formula", "fragment"),
    [
        (r"\frac{a}{b}", "<mfrac>"),
        (r"\sqrt{x}", "<msqrt>"),
        (r"x_i", "<msub>"),
        (r"\begin{pmatrix}a & b\\ c & d\end{pmatrix}", "<mtable>"),
        (r"\text{if } x", "<mtext>"),
        (r"\left(\frac{1}{2}\right)", 'stretchy="true" fence="true"'),
        (r"\hat{x}", '<mover accent="true">'),
        (r"\textbf{x}", '<mtext mathvariant="bold">'),
        (r"\begin{array}{cl}1 & 2\end{array}", '<mtd columnalign="center">'),
    ],
)
def test_typical_mathml_survives_the_sanitiser(formula, fragment):
    assert fragment in render_markdown(f"$${formula}$$", math=True)


def test_money_is_not_maths():
    html = render_markdown("It cost $5 and then $10.", math=True)
    assert "<math" not in html
    assert "It cost $5 and then $10." in html


def test_a_broken_formula_shows_its_source_and_the_rest_still_renders():
    html = render_markdown(
        "Broken $\\frac{1}{$ then *fine* $x$.\n\n$$\n\\frac{1}{\n$$\n\n**after**", math=True
    )
    assert '<code class="math-error">$\\frac{1}{$</code>' in html
    assert '<p><code class="math-error">$$\\frac{1}{$$</code></p>' in html
    assert "<em>fine</em>" in html
    assert "<strong>after</strong>" in html
    assert html.count("<math") == 1


def test_an_overlong_formula_is_shown_as_source():
    html = render_markdown("$" + "x+" * 3000 + "y$", math=True)
    assert "<math" not in html
    assert 'class="math-error"' in html


@pytest.mark.parametrize(
    "source",
    [
        r"$\href{javascript:alert(1)}{x}$",
        r"$$\href{javascript:alert(1)}{x}$$",
        r"$\style{color:red}{x}\class{evil}{y}\color{red}{z}$",
        "$<script>$",
        "$<script>alert(1)</script>$",
        '$\\text{<img src=x onerror="alert(1)">}$',
        "$$\n\\text{</math><script>alert(1)</script>}\n$$",
        "<math><maction actiontype='statusline'>x</maction></math> $x$",
        "[click](javascript:alert(1)) $y$",
        "<script>alert(1)</script>\n\n$$x$$",
    ],
)
def test_injection_is_inert_with_maths_and_source_lines(source):
    html = render_markdown(source, math=True, source_lines=True)
    _inert(html)
    assert "href" not in {name for tag, attrs in _elements(html) if tag != "a" for name, _ in attrs}
    assert 'style="' not in html
    assert "mathcolor" not in html


def test_source_lines_mark_every_top_level_block():
    source = "\n".join(
        [
            "# Title",  # 0
            "",
            "A paragraph with $x$",  # 2
            "",
            "- one",  # 4
            "- two",
            "",
            "```python",  # 7
            "x = 1",
            "```",
            "",
            "$$",  # 11
            "\\frac{1}{2}",
            "$$",
            "",
            "> quote",  # 15
            "",
            "---",  # 17
            "",
            "| a | b |",  # 19
            "|---|---|",
            "| 1 | 2 |",
            "",
            "1. first",  # 23
            "   - nested",
        ]
    )
    html = render_markdown(source, math=True, source_lines=True)
    lines = [
        (tag, dict(attrs)["data-line"])
        for tag, attrs in _elements(html)
        if attrs and "data-line" in dict(attrs)
    ]
    assert lines == [
        ("h1", "0"),
        ("p", "2"),
        ("ul", "4"),
        ("pre", "7"),
        ("math", "11"),
        ("blockquote", "15"),
        ("hr", "17"),
        ("table", "19"),
        ("ol", "23"),
    ]


def test_source_lines_are_off_by_default():
    assert "data-line" not in render_markdown("# a\n\ntext\n\n```\nx\n```", math=True)


def test_a_broken_display_formula_keeps_its_line():
    html = render_markdown("text\n\n$$\\frac{1}{$$", math=True, source_lines=True)
    assert '<p data-line="2"><code class="math-error">' in html


def test_data_line_is_digits_only():
    # Nothing in Markdown can set it, but the sanitiser is the guarantee either way.
    import nh3

    from apps.core import markdown

    dirty = '<p data-line="1 onload=x">a</p><p data-line="7">b</p><span data-line="3">c</span>'
    clean = nh3.clean(
        dirty,
        tags=markdown.ALLOWED_TAGS,
        attributes=markdown.ALLOWED_ATTRIBUTES,
        attribute_filter=markdown._only_digit_lines,
    )
    assert clean == '<p>a</p><p data-line="7">b</p><span>c</span>'


def test_a_callers_anchors_and_links_are_placed_and_sanitised():
    text = "The boiler is serviced in October.\n\n- Pressure at 1.5 bar"
    html = render_markdown(
        text,
        anchors=[(0, "^b15695"), (38, "^press1")],
        links=[(4, 10, "/library/doc/7/#^b15695")],
    )
    assert html.startswith('<p><span id="^b15695"></span>The <a href="/library/doc/7/#^b15695"')
    assert ">boiler</a> is serviced" in html
    assert '<li><span id="^press1"></span>Pressure at 1.5 bar</li>' in html


def test_a_callers_odd_ids_hrefs_and_offsets_come_to_nothing():
    text = "Some words here. \ue0000\ue001 forged"
    html = render_markdown(
        text,
        anchors=[(0, '^a"b<script>'), (2, "chunk-1"), (999, "^late")],
        links=[(0, 4, "javascript:alert(1)"), (5, 400, "/x"), (2, 8, "/overlapping")],
    )
    elements = _elements(html)
    assert not [tag for tag, _ in elements if tag == "script"]
    assert not [value for _, attrs in elements for name, value in attrs if name == "id"]
    assert not [v for _, attrs in elements for _, v in attrs if "javascript" in (v or "")]
    assert "/x" not in html and "late" not in html
    assert "forged" in html and "\ue000" not in html
