"""The one Markdown path: everything untrusted that is shown as rich text
(notes, web pages, model replies) is rendered here and nowhere else.

markdown-it renders with raw HTML disabled (so `<script>` in a note is text),
then nh3 sanitises the result against an allowlist: no scripts, no event
handlers, no `style`, no `hx-*` attributes, no `javascript:` links, no iframes.
Links get `rel="noopener noreferrer"`; external images are not loaded (they
would tell a third party what you read): they become links. Fenced code with a
known language is coloured by Pygments as `<span class="…">` tokens, which the
sanitiser keeps (classes only, no styles); the colours live in app.css.
"""

from __future__ import annotations

import re

import nh3
from django.utils.safestring import SafeString
from markdown_it import MarkdownIt
from mdit_py_plugins.tasklists import tasklists_plugin
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

_CODE_FORMATTER = HtmlFormatter(nowrap=True, classprefix="hl-")
# Past this size colouring costs more than it helps (and a note can hold a huge dump).
_HIGHLIGHT_MAX_CHARS = 20_000


def _highlight(code: str, lang: str, _attrs: str) -> str:
    """Coloured HTML for a fenced block, or "" to let markdown-it escape it plainly."""
    if not lang or len(code) > _HIGHLIGHT_MAX_CHARS:
        return ""
    try:
        lexer = get_lexer_by_name(lang.split()[0], stripnl=False)
    except ClassNotFound:
        return ""
    return highlight(code, lexer, _CODE_FORMATTER)


_renderer = (
    MarkdownIt(
        "commonmark",
        {"html": False, "linkify": False, "typographer": False, "highlight": _highlight},
    )
    .enable(["table", "strikethrough"])
    .use(tasklists_plugin)
)

ALLOWED_TAGS = {
    "a", "abbr", "b", "blockquote", "br", "code", "del", "em", "h1", "h2", "h3", "h4", "h5",
    "h6", "hr", "i", "img", "input", "kbd", "li", "mark", "ol", "p", "pre", "s", "span",
    "strong", "sub", "sup", "table", "tbody", "td", "th", "thead", "tr", "ul",
    "math", "mi", "mn", "mo", "mrow", "msub", "msup", "mfrac", "msqrt", "mtext", "mspace",
    "semantics", "annotation", "munder", "mover", "munderover", "mtable", "mtr", "mtd",
}  # fmt: skip
ALLOWED_ATTRIBUTES = {
    "a": {"href", "title"},
    "img": {"src", "alt", "title"},
    "code": {"class"},
    "span": {"class"},
    "td": {"align"},
    "th": {"align"},
    "input": {"type", "checked", "disabled"},
    "ol": {"start"},
    "math": {"display"},
}
URL_SCHEMES = {"http", "https", "mailto"}
_EXTERNAL_IMAGE = re.compile(r'<img src="(https?://[^"]*)"(?: alt="([^"]*)")?[^>]*>')


def _no_external_images(html: str) -> str:
    return _EXTERNAL_IMAGE.sub(
        lambda m: f'<a href="{m.group(1)}">[image: {m.group(2) or "external"}]</a>', html
    )


def render_markdown(text: str) -> SafeString:
    """Untrusted Markdown → sanitised HTML, safe to put in a page."""
    html = _renderer.render(text or "")
    html = _no_external_images(html)
    clean = nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        link_rel="noopener noreferrer",
        strip_comments=True,
    )
    # The sanitiser above is the guarantee; this is the one place that marks
    # HTML safe, and only its output.
    return SafeString(clean)
