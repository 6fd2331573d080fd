"""The draft preview: a whole small HTML document for the editor's preview
frame (`sandbox="allow-same-origin"`, never allow-scripts).

The document's own CSP says `default-src 'none'` as well, so if the sandbox
attribute were ever dropped nothing would load or run: the only style is the
inline sheet below, the only images are `data:` ones. The body comes from the
one Markdown path (apps/core/markdown.py) with maths and source lines on, or
is the file's text escaped for the formats that are not Markdown.

The result is a plain `str`, not SafeString, on purpose: served as the frame's
own response it is the whole page; put in a `srcdoc` attribute instead, it is
the template's ordinary attribute escaping that must keep it there.
"""

from __future__ import annotations

import csv
import io
from pathlib import PurePosixPath

from django.utils.html import escape

from apps.core.markdown import render_markdown

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
CSV_MAX_ROWS = 500
# A spreadsheet export can be very wide; past this the table is not readable anyway.
CSV_MAX_COLUMNS = 60
_MARKDOWN_SUFFIXES = {".md", ".markdown"}

# Literal colours from static/css/tokens.css: the frame cannot see the app's
# stylesheet (its CSP allows no external style). It follows the system theme.
_STYLE = """
:root {
  color-scheme: light dark;
  --bg: #ffffff; --surface-2: #f0f0ec; --text: #1d1f23; --muted: #5c6270;
  --border: #dcdcd6; --accent: #3553d1; --ok: #1e7a46; --warn: #8a5a00;
  --danger: #b3261e; --danger-soft: #fbe4e2; --code-bg: #f0f0ec; --mark-bg: #fff1a8;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #1b1e23; --surface-2: #23272e; --text: #e7e9ee; --muted: #a0a6b3;
    --border: #343a44; --accent: #8ea2ff; --ok: #5fcf8d; --warn: #f0c35a;
    --danger: #ff8a80; --danger-soft: #3a1c1a; --code-bg: #23272e; --mark-bg: #5b4d00;
  }
}
*, *::before, *::after { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body {
  margin: 0 auto; padding: 1rem 1.25rem 3rem; max-width: 46rem;
  background: var(--bg); color: var(--text);
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  font-size: 1rem; line-height: 1.55; overflow-wrap: anywhere;
}
h1, h2, h3, h4, h5, h6 { line-height: 1.25; margin: 1.5rem 0 0.75rem; }
body > :first-child { margin-top: 0; }
h1 { font-size: 1.75rem; }
h2 { font-size: 1.375rem; }
h3 { font-size: 1.125rem; }
h4, h5, h6 { font-size: 1rem; }
p, ul, ol, blockquote, table, pre { margin: 0 0 0.75rem; }
a { color: var(--accent); text-underline-offset: 0.25rem; }
code, pre, kbd { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas,
  "Liberation Mono", monospace; font-size: 0.875rem; }
code { background: var(--code-bg); padding: 0 0.25rem; border-radius: 4px; }
pre { background: var(--code-bg); padding: 0.75rem; border-radius: 8px; overflow-x: auto; }
pre code { background: none; padding: 0; }
pre.plain { white-space: pre-wrap; background: none; padding: 0; }
blockquote { border-left: 3px solid var(--border); padding-left: 0.75rem; color: var(--muted); }
hr { border: 0; border-top: 1px solid var(--border); margin: 1.5rem 0; }
table { border-collapse: collapse; font-size: 0.875rem; display: block; overflow-x: auto; }
th, td { text-align: left; padding: 0.375rem 0.75rem; border-bottom: 1px solid var(--border);
  vertical-align: top; }
th { color: var(--muted); font-weight: 550; background: var(--surface-2); }
img { max-width: 100%; }
mark { background: var(--mark-bg); color: inherit; }
math { font-size: 1.1em; }
math[display="block"] { display: block; margin: 0 0 0.75rem; overflow-x: auto; }
code.math-error { color: var(--danger); background: var(--danger-soft); }
.note { color: var(--muted); font-size: 0.875rem; }
.hl-k, .hl-kc, .hl-kd, .hl-kn, .hl-kp, .hl-kr, .hl-kt, .hl-ow { color: var(--accent); }
.hl-s, .hl-s1, .hl-s2, .hl-sa, .hl-sb, .hl-sc, .hl-sd, .hl-se, .hl-sh, .hl-si, .hl-sr,
.hl-ss, .hl-sx { color: var(--ok); }
.hl-c, .hl-c1, .hl-cm, .hl-cp, .hl-cs, .hl-ch, .hl-cpf { color: var(--muted); font-style: italic; }
.hl-m, .hl-mi, .hl-mf, .hl-mh, .hl-mo, .hl-mb, .hl-il, .hl-nb, .hl-bp, .hl-nt, .hl-na {
  color: var(--warn); }
.hl-nf, .hl-fm, .hl-nc, .hl-nd, .hl-ne { color: var(--danger); }
"""


def _document(body: str, *, title: str) -> str:
    return (
        "<!doctype html>\n"
        '<html><head><meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        '<meta name="referrer" content="no-referrer">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<base target="_blank">\n'
        f"<title>{escape(title)}</title>\n"
        f"<style>{_STYLE}</style>\n"
        f"</head><body>\n{body}</body></html>\n"
    )


def preview_document(text: str, *, title: str) -> str:
    """Markdown (with $maths$ and data-line marks for scroll-sync) as a preview document."""
    return _document(str(render_markdown(text, math=True, source_lines=True)), title=title)


def _plain(text: str) -> str:
    return f'<pre class="plain">{escape(text)}</pre>\n'


def _csv_table(text: str) -> str:
    """The first rows as a table of escaped cells; the raw text if it does not parse."""
    rows: list[list[str]] = []
    more = 0
    try:
        for row in csv.reader(io.StringIO(text)):
            if len(rows) < CSV_MAX_ROWS:
                rows.append(row[:CSV_MAX_COLUMNS])
            else:
                more += 1
    except csv.Error:
        return _plain(text)
    if not rows:
        return _plain(text)
    head, *body = rows
    lines = ["<table>", "<thead><tr>"]
    lines += [f"<th>{escape(cell)}</th>" for cell in head]
    lines.append("</tr></thead><tbody>")
    for row in body:
        lines.append("<tr>" + "".join(f"<td>{escape(cell)}</td>" for cell in row) + "</tr>")
    lines.append("</tbody></table>")
    if more:
        lines.append(f'<p class="note">… and {more} more rows, not shown here.</p>')
    return "\n".join(lines) + "\n"


def preview_for(filename: str, text: str) -> str:
    """The preview document for a draft file, chosen by its extension."""
    suffix = PurePosixPath(filename).suffix.lower()
    if suffix in _MARKDOWN_SUFFIXES:
        return preview_document(text, title=filename)
    if suffix == ".csv":
        return _document(_csv_table(text), title=filename)
    # .txt, .tex, .bib and anything else: the text exactly as written.
    return _document(_plain(text), title=filename)
