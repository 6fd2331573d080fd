"""Template helpers: the Markdown path, search-term highlighting, small formats."""

from __future__ import annotations

import re

from django import template
from django.utils.html import escape, format_html, format_html_join
from django.utils.safestring import SafeString

from apps.core.jobs import run_title
from apps.core.markdown import render_markdown

register = template.Library()


@register.filter
def markdown(text: str) -> SafeString:
    return render_markdown(text)


@register.filter
def highlight(text: str, terms) -> SafeString:
    """`text` escaped, with each search term wrapped in <mark>. Built from
    escaped pieces with format_html, so nothing unescaped can slip through."""
    words = [t for t in (terms or []) if t]
    if not words or not text:
        return escape(text or "")
    pattern = re.compile(r"\b(" + "|".join(re.escape(w) for w in words) + r")\w*", re.I)
    pieces = []
    last = 0
    for match in pattern.finditer(text):
        pieces.append(escape(text[last : match.start()]))
        pieces.append(format_html("<mark>{}</mark>", match.group(0)))
        last = match.end()
    pieces.append(escape(text[last:]))
    return format_html_join("", "{}", ((piece,) for piece in pieces))


@register.filter
def filesize(size: int) -> str:
    size = int(size or 0)
    for unit in ("bytes", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size} {unit}" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024
    return str(size)


@register.filter
def job_title(run) -> str:
    """A JobRun as a sentence: "Reading report.pdf" (apps.core.jobs.run_title)."""
    return run_title(run)
