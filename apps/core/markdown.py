"""The one Markdown path: everything untrusted that is shown as rich text
(notes, web pages, model replies, draft previews) is rendered here and nowhere else.

markdown-it renders with raw HTML disabled (so `<script>` in a note is text),
then nh3 sanitises the result against an allowlist: no scripts, no event
handlers, no `style`, no `hx-*` attributes, no `javascript:` links, no iframes.
Links get `rel="noopener noreferrer"`. No image is ever loaded: an external
one would tell a third party what you read, and one pointing into Jarvis
itself (`![](/library/doc/7/page/1.png)` in a shared note) would make every
reader's browser fire a request on the author's behalf, such as an expensive
page render. Every image becomes a link that says it is one. Fenced code with a
known language is coloured by Pygments as `<span class="…">` tokens, which the
sanitiser keeps (classes only, no styles); the colours live in app.css.

Two opt-in extras serve the draft preview. `math=True` turns `$…$` and `$$…$$`
into MathML with latex2mathml, before the sanitiser, so the MathML allowlist
below is what keeps a formula like `\\href{javascript:…}{x}` inert.
`source_lines=True` marks each top-level block with `data-line` (its 0-based
source line) so the editor can keep the preview scrolled with the text.

A caller that knows more about its text than Markdown says (the library's
Obsidian block ids) passes `anchors` (an empty `<span id>` at a place of the
text) and `links` (words of the text made a link). They are placed as
private-use markers, rendered through, turned into tags and then sanitised
like everything else: an id must be of safe characters (`_safe_id`), an href
of an allowed scheme or relative.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import nh3
from django.utils.safestring import SafeString
from latex2mathml.converter import convert as latex_to_mathml
from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.tasklists import tasklists_plugin
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

_CODE_FORMATTER = HtmlFormatter(nowrap=True, classprefix="hl-")
# Past this size colouring costs more than it helps (and a note can hold a huge dump).
_HIGHLIGHT_MAX_CHARS = 20_000
# latex2mathml is fast and linear, but a pasted data dump between two dollars
# is not a formula; past this it is shown as source instead.
_MATH_MAX_CHARS = 4_000


def _highlight(code: str, lang: str, _attrs: str) -> str:
    """Coloured HTML for a fenced block, or "" to let markdown-it escape it plainly."""
    if not lang or len(code) > _HIGHLIGHT_MAX_CHARS:
        return ""
    try:
        lexer = get_lexer_by_name(lang.split()[0], stripnl=False)
    except ClassNotFound:
        return ""
    return highlight(code, lexer, _CODE_FORMATTER)


def _formula(source: str, *, display: bool) -> str:
    """MathML for one formula, or its source as code when latex2mathml cannot read it."""
    source = source.strip()
    if len(source) <= _MATH_MAX_CHARS:
        try:
            return latex_to_mathml(source, display="block" if display else "inline")
        # latex2mathml signals bad input with its own errors but also with
        # IndexError, KeyError, RecursionError…; any of them means "not a formula".
        except Exception:  # noqa: S110
            pass
    delimiter = "$$" if display else "$"
    return f'<code class="math-error">{escapeHtml(delimiter + source + delimiter)}</code>'


def _render_math_inline(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    return _formula(tokens[idx].content, display=False)


def _render_math_inline_double(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    return _formula(tokens[idx].content, display=True)


def _render_math_block(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    token = tokens[idx]
    line = token.attrGet("data-line")
    mark = "" if line is None else f' data-line="{line}"'
    html = _formula(token.content, display=True)
    if html.startswith("<math"):
        return html.replace("<math", f"<math{mark}", 1) + "\n"
    # The error is inline code; a paragraph keeps it a block of its own.
    return f"<p{mark}>{html}</p>\n"


def _render_fence(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    # markdown-it puts a fence's attributes on <code>; scroll-sync wants the
    # line on the outer block, like every other block.
    token = tokens[idx]
    line = token.attrs.pop("data-line", None)
    html = RendererHTML.fence(self, tokens, idx, options, env)
    if line is None:
        return html
    return html.replace("<pre", f'<pre data-line="{line}"', 1)


def _render_image(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    token = tokens[idx]
    alt = self.renderInlineAsText(token.children or [], options, env) or "image"
    src = str(token.attrGet("src") or "")
    return f'<a href="{escapeHtml(src)}">[image: {escapeHtml(alt)}]</a>'


def _build_renderer(*, math: bool) -> MarkdownIt:
    md = (
        MarkdownIt(
            "commonmark",
            {"html": False, "linkify": False, "typographer": False, "highlight": _highlight},
        )
        .enable(["table", "strikethrough"])
        .use(tasklists_plugin)
    )
    md.add_render_rule("fence", _render_fence)
    md.add_render_rule("image", _render_image)
    if math:
        # Pandoc's rule for what counts as inline maths: no space just inside the
        # dollars and no digit straight after the closing one, so "$5 and $10" is money.
        md.use(
            dollarmath_plugin,
            allow_labels=False,
            allow_space=False,
            allow_digits=False,
            allow_blank_lines=False,
            double_inline=True,
        )
        md.add_render_rule("math_inline", _render_math_inline)
        md.add_render_rule("math_inline_double", _render_math_inline_double)
        md.add_render_rule("math_block", _render_math_block)
    return md


# Built once at import; maths gets its own instance so plain notes, web pages
# and model replies never see dollar parsing.
_renderer = _build_renderer(math=False)
_math_renderer = _build_renderer(math=True)

# The MathML that latex2mathml emits, and nothing that can act: no <maction>,
# no <annotation-xml> (an HTML integration point), no href, xlink:*, style,
# class, mathcolor or mathbackground (\href, \style, \class, \color produce them).
_MATHML_TAGS = {
    "math", "mi", "mn", "mo", "mrow", "msub", "msup", "msubsup", "mfrac", "msqrt", "mroot",
    "mtext", "mspace", "mstyle", "mpadded", "mphantom", "menclose", "semantics", "annotation",
    "munder", "mover", "munderover", "mtable", "mtr", "mtd",
}  # fmt: skip
_MATH_TOKEN = {"mathvariant"}
_MATH_ALIGN = {"columnalign", "rowalign"}
_MATH_OPERATOR = _MATH_TOKEN | {
    "accent", "fence", "form", "largeop", "lspace", "maxsize", "minsize", "movablelimits",
    "rspace", "separator", "stretchy", "symmetric",
}  # fmt: skip
_MATH_TABLE = _MATH_ALIGN | {
    "columnlines", "columnspacing", "displaystyle", "rowlines", "rowspacing",
}  # fmt: skip
_MATHML_ATTRIBUTES = {
    "math": {"display", "xmlns"},
    "mi": _MATH_TOKEN,
    "mn": _MATH_TOKEN,
    "mtext": _MATH_TOKEN,
    "mo": _MATH_OPERATOR,
    "mover": {"accent"},
    "munder": {"accentunder"},
    "munderover": {"accent", "accentunder"},
    "mfrac": {"linethickness"},
    "mspace": {"width", "height", "depth"},
    "mpadded": {"width", "height", "depth", "lspace", "voffset"},
    "mstyle": {"displaystyle", "scriptlevel", "mathsize"},
    "menclose": {"notation"},
    "mtable": _MATH_TABLE,
    "mtr": _MATH_ALIGN,
    "mtd": _MATH_ALIGN | {"columnspan", "rowspan"},
    "annotation": {"encoding"},
}
# Blocks that can carry a source line (see _mark_source_lines); the value is
# digits only, enforced by _only_digit_lines.
_LINE_TAGS = {
    "p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "pre", "blockquote", "table", "hr",
    "math",
}  # fmt: skip

ALLOWED_TAGS = {
    "a", "abbr", "b", "blockquote", "br", "code", "del", "em", "h1", "h2", "h3", "h4", "h5",
    "h6", "hr", "i", "input", "kbd", "li", "mark", "ol", "p", "pre", "s", "span",
    "strong", "sub", "sup", "table", "tbody", "td", "th", "thead", "tr", "ul",
} | _MATHML_TAGS  # fmt: skip
ALLOWED_ATTRIBUTES: dict[str, set[str]] = {
    "a": {"href", "title"},
    "code": {"class"},
    "span": {"class", "id"},
    "td": {"align"},
    "th": {"align"},
    "input": {"type", "checked", "disabled"},
    "ol": {"start"},
}
for _tag, _names in _MATHML_ATTRIBUTES.items():
    ALLOWED_ATTRIBUTES[_tag] = ALLOWED_ATTRIBUTES.get(_tag, set()) | _names
for _tag in _LINE_TAGS:
    ALLOWED_ATTRIBUTES[_tag] = ALLOWED_ATTRIBUTES.get(_tag, set()) | {"data-line"}
URL_SCHEMES = {"http", "https", "mailto"}


_SAFE_ID = re.compile(r"\^[A-Za-z0-9_-]{1,80}")


def _only_digit_lines(_tag: str, attribute: str, value: str) -> str | None:
    if attribute == "data-line" and not (value.isascii() and value.isdigit()):
        return None
    if attribute == "id" and not _SAFE_ID.fullmatch(value):
        return None
    return value


# Where a caller's anchors and links stand while the text is rendered.
_ANCHOR, _LINK, _MID, _END, _LINK_END = "\ue000", "\ue002", "\ue003", "\ue001", "\ue004"
_PLACED = re.compile(f"{_ANCHOR}(\\d+){_END}|{_LINK}(\\d+){_MID}|{_LINK_END}")
_PLACEHOLDER_CHARS = str.maketrans("", "", _ANCHOR + _LINK + _MID + _END + _LINK_END)


def _place(text: str, anchors, links) -> str:
    """`text` with a marker at each anchor and around each link's words
    (links that overlap another, or cross a line, are left as words)."""
    text = text.translate(_PLACEHOLDER_CHARS)
    inserts: list[tuple[int, int, str]] = []  # (offset, order at that offset, marker)
    for n, (offset, _id) in enumerate(anchors):
        if 0 <= offset <= len(text):
            inserts.append((offset, 1, f"{_ANCHOR}{n}{_END}"))
    taken: list[tuple[int, int]] = []
    for n, (start, end, _href) in enumerate(links):
        if not (0 <= start < end <= len(text)) or "\n" in text[start:end]:
            continue
        if any(start < t_end and t_start < end for t_start, t_end in taken):
            continue
        taken.append((start, end))
        inserts.append((start, 2, f"{_LINK}{n}{_MID}"))
        inserts.append((end, 0, _LINK_END))
    for offset, _order, marker in sorted(inserts, key=lambda i: (i[0], i[1]), reverse=True):
        text = text[:offset] + marker + text[offset:]
    return text


def _placed_html(html: str, anchors, links) -> str:
    def tag(match: re.Match) -> str:
        if match.group(1) is not None:
            return f'<span id="{escapeHtml(str(anchors[int(match.group(1))][1]))}"></span>'
        if match.group(2) is not None:
            return f'<a href="{escapeHtml(str(links[int(match.group(2))][2]))}">'
        return "</a>"

    return _PLACED.sub(tag, html)


def _mark_source_lines(tokens: list[Token]) -> None:
    """`data-line` on every top-level block: opening tags and whole blocks (fence, hr, $$)."""
    for token in tokens:
        if token.level == 0 and token.nesting >= 0 and token.map:
            token.attrSet("data-line", str(token.map[0]))


def render_markdown(
    text: str,
    *,
    math: bool = False,
    source_lines: bool = False,
    anchors: Sequence[tuple[int, str]] = (),
    links: Sequence[tuple[int, int, str]] = (),
) -> SafeString:
    """Untrusted Markdown → sanitised HTML, safe to put in a page. `anchors`:
    (offset in text, id) for an empty `<span id>` there; `links`: (start,
    end, href) for words to link."""
    md = _math_renderer if math else _renderer
    env: EnvType = {}
    marked = bool(anchors or links)
    if marked:
        text = _place(text or "", anchors, links)
    tokens = md.parse(text or "", env)
    if source_lines:
        _mark_source_lines(tokens)
    html = md.renderer.render(tokens, md.options, env)
    if marked:
        html = _placed_html(html, anchors, links)
    clean = nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        link_rel="noopener noreferrer",
        strip_comments=True,
        attribute_filter=_only_digit_lines,
    )
    # The sanitiser above is the guarantee; this is the one place that marks
    # HTML safe, and only its output.
    return SafeString(clean)
