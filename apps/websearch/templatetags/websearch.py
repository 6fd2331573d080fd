"""`fetched`: a web source's stored fetch time as every page writes a moment."""

from __future__ import annotations

from datetime import datetime

from django import template

from apps.core.templatetags.jarvis import when

register = template.Library()


@register.filter
def fetched(value: str) -> str:
    try:
        return when(datetime.fromisoformat(value))
    except (TypeError, ValueError):
        return "at an unknown time"
