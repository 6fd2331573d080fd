"""`{{ document|doc_state }}`: a document's state in the one vocabulary of
apps.library.status, for every template that shows one."""

from __future__ import annotations

from django import template

from apps.library.status import DocState, state_of

register = template.Library()


@register.filter
def doc_state(document) -> DocState:
    return state_of(document)
