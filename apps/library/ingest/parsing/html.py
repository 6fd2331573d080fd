"""Web pages → the article's text, chunked under its headings.

A saved page is mostly navigation, adverts, cookie banners and footers; only
the main content is worth indexing. trafilatura finds it and renders it as
Markdown, which the Markdown parser then chunks under heading breadcrumbs.
Before it looks, the page's landmarks that are never the article are pruned
(`_BOILERPLATE`: navigation, the site's header and footer outside
<article>/<main>, cookie and consent banners): trafilatura alone keeps a
short page's menu and footer, because below its minimum size it falls back to
the whole body. The same pruned page is what the short-page and no-article
fallbacks read, so neither brings the menu back; only a page with no text
outside those landmarks is read whole.
Title, author, site and date come from the page's metadata (Open Graph,
JSON-LD, <meta>, <time>); the date only from explicit markup, never guessed
from a copyright line.

A page is untrusted input: nothing in it is executed or fetched. Scripts,
styles and hidden elements are never text (hidden text is where spam and
instructions aimed at language models hide), and the HTML parser is told not
to touch the network. A page that trafilatura finds no article in, or a short
one, is indexed by its visible body text (less the pruned landmarks) instead.

Uploaded .html/.htm files are read the same way as pages added by URL: a saved
page is the same bytes whichever way it arrives.
"""

from __future__ import annotations

import codecs
import copy
import re
from datetime import date
from urllib.parse import urlsplit

import lxml.etree
import lxml.html
import trafilatura

from apps.library.ingest.parsing.markdown import parse_markdown
from apps.library.ingest.parsing.types import ParsedDocument, UnreadableDocument

WEB_DATE_SOURCE = "page"  # content_date_source for a date the page's markup gives
CHARSET_WINDOW = 4096  # the HTML spec looks for <meta charset> in the first 1024 bytes; be lenient
# A page whose main content is shorter than MIN_MAIN_CHARS and whose visible
# text is longer, but at most MAX_SHORT_PAGE_CHARS, is indexed whole.
MIN_MAIN_CHARS = 200
MAX_SHORT_PAGE_CHARS = 2000
MAX_TITLE_CHARS = 300

_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)
# Labels a browser reads as windows-1252 (the WHATWG Encoding Standard).
_WINDOWS_1252_LABELS = frozenset(
    {"iso-8859-1", "iso8859-1", "latin1", "latin-1", "us-ascii", "ascii"}
)

# Never shown to a reader. <noscript> is dropped too: it is a "please enable
# JavaScript" notice far more often than content.
_NEVER_SHOWN = ("script", "style", "noscript", "template")
# Not text in the fallback either: embedded objects and form controls.
_NOT_TEXT = ("head", "svg", "math", "iframe", "object", "embed", "canvas", "select", "button")
_BLOCK_TAGS = frozenset(
    {
        "address", "article", "aside", "blockquote", "br", "dd", "details", "dialog", "div",
        "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3",
        "h4", "h5", "h6", "header", "hr", "li", "main", "nav", "ol", "p", "pre", "section",
        "summary", "table", "tbody", "tfoot", "thead", "tr", "ul",
    }
)  # fmt: skip
_HEADINGS = {f"h{level}": level for level in range(1, 7)}  # the fallback marks them as Markdown
_LINE_TAGS = frozenset({"br", "li", "dd", "dt", "tr"})
# Landmarks that are never the article (XPath 1.0 has no lower-case(), hence
# translate()). A <header>/<footer> inside <article> or <main> is the
# article's own (its title, its byline, its tags) and stays; so does a site
# header holding the page's <h1>. A consent banner is matched by its id/class
# but never when it holds the heading or the article, so a page about cookies
# is not taken for its own banner.
_ID_CLASS = (
    "translate(concat(' ', @id, ' ', @class),"
    " 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')"
)
_BOILERPLATE = lxml.etree.XPath(
    " | ".join(
        (
            "//nav",
            "//*[@role='navigation' or @role='contentinfo' or @role='search']",
            "//header[not(ancestor::article or ancestor::main)][not(.//h1)]",
            "//*[@role='banner'][not(.//h1)]",
            "//footer[not(ancestor::article or ancestor::main)]",
            "//body//*[not(self::main or self::article)][not(.//h1 or .//main or .//article)]"
            f"[contains({_ID_CLASS}, 'cookie') or contains({_ID_CLASS}, 'consent')"
            f" or contains({_ID_CLASS}, 'gdpr')]",
        )
    )
)
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.I)
_SPACES = re.compile(r"[ \t\r\f\v\u00a0]+")
_BLANK_LINES = re.compile(r"\n\s*\n+")


def parse_html(data: bytes, *, url: str = "", fallback_title: str) -> ParsedDocument:
    """Parse a web page into chunks of its main content plus title/authors/site/date.

    Raises UnreadableDocument when the page has no readable text at all.
    """
    if not data.strip():
        raise UnreadableDocument("empty file")
    html = decode_html(data)
    if not html.strip():
        raise UnreadableDocument("no readable text on the page")

    # Metadata from the page as it is: JSON-LD lives in <script> elements.
    metadata = _metadata(html, url)
    title = _clean_line(metadata.title or "")[:MAX_TITLE_CHARS]
    # Content only from what a reader sees: text in scripts, styles or hidden
    # elements (a favourite place for spam and for instructions aimed at
    # language models) is removed before anything looks for the article.
    root = _parse(html)
    if root is None:
        raise UnreadableDocument("no readable text on the page")
    _remove_invisible(root)
    content = copy.deepcopy(root)
    _remove_boilerplate(content)
    main = _main_content(content, url)  # trafilatura works on a copy
    # What a reader sees less the menu and footer; the whole page only when
    # nothing is left without them (a page that is all navigation).
    visible = _visible_text(content) or _visible_text(root)
    # A short page is kept whole: losing the one useful line of a page is
    # worse than indexing its menu.
    use_main = bool(main) and not (
        len(main) < MIN_MAIN_CHARS and len(main) < len(visible) <= MAX_SHORT_PAGE_CHARS
    )

    # Both are Markdown (the fallback marks the page's <h1>-<h6> with #), so
    # either way the text is chunked under its headings. A leading newline
    # keeps a page that starts with "---" from being read as frontmatter: a
    # web page must not set the person's record fields.
    note = parse_markdown(
        "\n" + (main if use_main else visible), fallback_title=title or fallback_title
    )
    chunks = note.chunks
    title = title or note.title
    if not chunks:
        raise UnreadableDocument("no readable text on the page")

    parsed = ParsedDocument(
        title=title or fallback_title,
        kind="web",
        chunks=chunks,
        authors=_authors(metadata.author or ""),
        url=url,
        site=_clean_line(metadata.sitename or "") or _host(url) or _host(metadata.url or ""),
    )
    published = _date(metadata.date)
    if published:
        parsed.content_date, parsed.content_date_source = published, WEB_DATE_SOURCE
    return parsed


# --- decoding ----------------------------------------------------------------


def decode_html(data: bytes) -> str:
    """Bytes → text: a BOM wins, then a declared charset, then UTF-8; bytes that
    are not UTF-8 and declare nothing are read as windows-1252, as browsers do."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return data[len(bom) :].decode(encoding, errors="replace")
    declared = _declared_encoding(data[:CHARSET_WINDOW])
    if declared:
        return data.decode(declared, errors="replace")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("windows-1252", errors="replace")


def _declared_encoding(head: bytes) -> str:
    match = _META_CHARSET.search(head)
    if not match:
        return ""
    label = match.group(1).decode("ascii", errors="ignore").strip().lower()
    if label in _WINDOWS_1252_LABELS:
        return "windows-1252"
    try:
        name = codecs.lookup(label).name
    except LookupError:
        return ""
    # A page that declares UTF-16 in ASCII-compatible bytes is not UTF-16.
    return "utf-8" if name.startswith("utf-16") or name.startswith("utf-32") else name


# --- main content and metadata -------------------------------------------------


def _main_content(root: lxml.html.HtmlElement, url: str) -> str:
    try:
        markdown = trafilatura.extract(
            root,
            url=url or None,
            output_format="markdown",
            include_links=False,
            include_images=False,
            include_tables=True,
            include_comments=False,
            favor_recall=True,
        )
    except (ValueError, TypeError, lxml.etree.LxmlError):
        return ""
    return (markdown or "").strip()


def _metadata(html: str, url: str):
    try:
        # extensive=False: dates only from markup (meta tags, <time>, JSON-LD,
        # a dated byline), never a year guessed from "© 2023".
        return trafilatura.extract_metadata(html, default_url=url or None, extensive=False)
    except (ValueError, TypeError, lxml.etree.LxmlError):
        return trafilatura.settings.Document()


def _date(value: str | None) -> date | None:
    if not value:
        return None
    try:
        return date.fromisoformat(value[:10])
    except ValueError:
        return None


def _authors(raw: str) -> str:
    names = [_clean_line(name) for name in re.split(r"\s*;\s*", raw)]
    return ", ".join(name for name in names if name)


def _host(url: str) -> str:
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return ""
    return host.removeprefix("www.")


def _clean_line(text: str) -> str:
    return " ".join(text.split())


# --- fallback: the visible text of <body> ---------------------------------------


def _parse(html: str) -> lxml.html.HtmlElement | None:
    # Bytes with an explicit encoding: a <meta charset> in the page must not
    # make lxml decode the already-decoded text a second time.
    parser = lxml.html.HTMLParser(
        encoding="utf-8", remove_comments=True, remove_pis=True, no_network=True, recover=True
    )
    try:
        return lxml.html.document_fromstring(html.encode("utf-8", errors="replace"), parser=parser)
    except (ValueError, lxml.etree.LxmlError):
        return None


def _remove_invisible(root: lxml.html.HtmlElement) -> None:
    """Remove what is never shown: scripts, styles, templates and hidden elements."""
    for element in list(root.iter(*_NEVER_SHOWN)):
        _drop(element)
    body = root.find("body")
    for element in list((body if body is not None else root).iter()):
        if isinstance(element.tag, str) and _is_hidden(element):
            _drop(element)


def _remove_boilerplate(root: lxml.html.HtmlElement) -> None:
    """Remove navigation, the site's header and footer and consent banners."""
    for element in _BOILERPLATE(root):
        _drop(element)


def _visible_text(root: lxml.html.HtmlElement) -> str:
    body = root.find("body")
    if body is None:
        body = root
    for element in list(body.iter(*_NOT_TEXT)):
        _drop(element)
    parts: list[str] = []
    _collect(body, parts)
    lines = (_SPACES.sub(" ", line).strip() for line in "".join(parts).split("\n"))
    return _BLANK_LINES.sub("\n\n", "\n".join(lines)).strip()


def _is_hidden(element) -> bool:
    return element.get("hidden") is not None or bool(
        _HIDDEN_STYLE.search(element.get("style") or "")
    )


def _drop(element) -> None:
    """Remove an element but keep its tail, which belongs to the parent."""
    if element.getparent() is not None:
        element.drop_tree()


def _collect(body, parts: list[str]) -> None:
    """Append the text under `body` to `parts`, block elements on their own
    lines, headings as Markdown headings and table cells apart. Iterative: a
    hostile page may nest deeply."""
    for event, element in lxml.etree.iterwalk(body, events=("start", "end")):
        tag = element.tag if isinstance(element.tag, str) else ""
        if event == "start":
            if tag in _BLOCK_TAGS:
                parts.append("\n" if tag in _LINE_TAGS else "\n\n")
            if tag in _HEADINGS:
                parts.append("#" * _HEADINGS[tag] + " ")
            if tag and element.text:
                parts.append(element.text)
            continue
        if tag in ("td", "th"):
            parts.append(" ")
        elif tag in _BLOCK_TAGS:
            parts.append("\n")
        if element is not body and element.tail:
            parts.append(element.tail)
