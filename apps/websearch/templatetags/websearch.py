"""`fetched`: a web source's stored fetch time as every page writes a moment;
`web_outcome`: what became of an answered web search card, in words."""

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


@register.filter
def web_outcome(action) -> str:
    payload = action.payload or {}
    if payload.get("stopped"):
        return "stopped, not searched"
    answers = payload.get("answers") or {}
    if "calls" not in payload:  # a card of the earlier two-message flow
        return "searched" if action.status == "done" else "not searched"
    if action.status == "done" and any(answers.values()):
        return "searched"
    if action.status == "done":
        return "not searched: you declined"
    return "not searched"
