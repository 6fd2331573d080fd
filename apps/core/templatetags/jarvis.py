"""Template helpers: the Markdown path, search-term highlighting, small formats."""

from __future__ import annotations

import re
from datetime import date, datetime

from django import template
from django.utils import timezone
from django.utils.dateformat import format as date_format
from django.utils.html import escape, format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.timesince import timesince

from apps.core import escapes
from apps.core.jobs import run_title
from apps.core.markdown import render_markdown
from apps.core.timeformat import WHEN_FORMAT

register = template.Library()


@register.filter
def markdown(text: str) -> SafeString:
    return render_markdown(text)


# How the PDF parser starts an annotation's passage ("[HIGHLIGHT p.2] …",
# apps/library/ingest/parsing/pdf.py): the index keeps it, a reader sees a badge.
_ANNOTATION_MARKER = re.compile(r"^\[([A-Z]+) p\.(\d+)\]\s*")


@register.filter
def highlight(text: str, terms) -> SafeString:
    """`text` escaped, with each search term wrapped in <mark>, and an
    annotation's leading marker shown as a badge. Built from escaped pieces
    with format_html, so nothing unescaped can slip through."""
    marker = _ANNOTATION_MARKER.match(text or "")
    if marker is None:
        return _marked(text, terms)
    badge = format_html(
        '<span class="badge" data-testid="annotation-badge">{} · p. {}</span> ',
        marker.group(1).lower(),
        marker.group(2),
    )
    return format_html("{}{}", badge, _marked(text[marker.end() :], terms))


def _marked(text: str, terms) -> SafeString:
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
def field_label(key: str) -> str:
    """A record field by its name: `x_` (how frontmatter keys are stored,
    apps/library/ingest/parsing/frontmatter.py) is storage, not display."""
    key = str(key or "")
    if key.startswith("x_"):
        key = key[2:]
    return key.replace("_", " ")


@register.filter
def filesize(size: int) -> str:
    size = int(size or 0)
    if size == 1:
        return "1 byte"
    for unit in ("bytes", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size} {unit}" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024
    return str(size)


@register.filter
def job_title(run) -> str:
    """A JobRun as a sentence: "Reading report.pdf" (apps.core.jobs.run_title)."""
    return run_title(run)


@register.filter
def when(value) -> str:
    """A moment as every page shows one: "2026-12-01 19:30", 24-hour, in the
    instance's time zone (settings.TIME_ZONE). A plain date is just the date."""
    if not value:
        return ""
    if isinstance(value, datetime):
        moment = timezone.localtime(value) if timezone.is_aware(value) else value
        return date_format(moment, WHEN_FORMAT)
    if isinstance(value, date):
        return value.isoformat()
    return str(value)


@register.filter
def ago(value) -> str:
    """How long ago, as a list of recent things says it: "just now" under a
    minute (Django's timesince alone says "0 minutes"), else "5 minutes ago"."""
    if not value:
        return ""
    if (timezone.now() - value).total_seconds() < 60:
        return "just now"
    return f"{timesince(value)} ago"


@register.filter
def duration(seconds) -> str:
    """Seconds as a person says them: "12 s", "3 min 5 s", "2 h 10 min"."""
    seconds = int(seconds or 0)
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds} s" if seconds else f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if minutes else f"{hours} h"


@register.filter
def controls_visible(text: str) -> str:
    """Command output as shown: terminal escapes spelled out, never interpreted."""
    return escapes.controls_visible(text)
