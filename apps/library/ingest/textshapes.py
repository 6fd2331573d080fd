"""The shapes text takes, told from a sample: an HTML document, delimited
rows, Markdown. Used by `filetypes.sniff` to type the text family by content
rather than by name."""

from __future__ import annotations

import csv
import io
import re
from collections import Counter

from apps.library.ingest.parsing.frontmatter import split_frontmatter

CSV_MIN_ROWS = 2
_HTML_PREAMBLE = re.compile(r"\A(?:\s+|<!--.*?-->|<\?xml[^>]*\?>)*", re.S)
_HTML_START = re.compile(r"<(?:!doctype\s+html|html|head|body)(?=[\s>/])", re.I)

_MD_HEADING = re.compile(r"^#{1,6}[ \t]+\S", re.M)
_MD_WIKILINK = re.compile(r"\[\[[^\]\n]+\]\]")
_MD_FRONTMATTER_KEY = re.compile(r"^[\w-]+[ \t]*:", re.M)
# C0 controls other than tab, newline, vertical tab, form feed, carriage return, escape.


def looks_like_html(text: str) -> bool:
    """True when `text` starts as an HTML document does: a doctype or an
    <html>/<head>/<body> tag, after any BOM, whitespace, comments or XML declaration."""
    text = text.lstrip("\ufeff")
    start = _HTML_PREAMBLE.match(text)
    return bool(_HTML_START.match(text, start.end() if start else 0))


def looks_tabular(sample: str) -> bool:
    """Delimited rows: at least two lines, most of which split into the same
    number (≥ 2) of columns by one of , ; tab |."""
    lines = sample.splitlines()[:21]
    if len(lines) > 20:
        lines = lines[:-1]  # the last line of the sample may be cut short
    joined = "\n".join(lines)
    try:
        dialect = csv.Sniffer().sniff(joined, delimiters=",;\t|")
        rows = [row for row in csv.reader(io.StringIO(joined), dialect) if row]
    except csv.Error:
        return False
    if len(rows) < CSV_MIN_ROWS:
        return False
    widths = Counter(len(row) for row in rows)
    width, count = widths.most_common(1)[0]
    # Exports leave some rows ragged (trailing empty cells dropped); most agree.
    return width >= 2 and count >= 0.8 * len(rows)


def has_markdown(text: str) -> bool:
    """ATX headings, [[wikilinks]] or a YAML frontmatter block: syntax plain text lacks."""
    frontmatter, _ = split_frontmatter(text)
    if frontmatter is not None and _MD_FRONTMATTER_KEY.search(frontmatter):
        return True
    return bool(_MD_HEADING.search(text) or _MD_WIKILINK.search(text))
