"""The Digests link in the site navigation, shown only where the digest is
usable (instance switch on and the person has the permission), so nobody
meets a page that can only tell them no."""

from __future__ import annotations

from django import template
from django.urls import reverse
from django.utils.html import format_html

from apps.digest.selectors import may_use_digest

register = template.Library()


@register.simple_tag(takes_context=True)
def digest_nav_link(context) -> str:
    request = context.get("request")
    user = getattr(request, "user", None)
    if user is None or not may_use_digest(user=user):
        return ""
    match = getattr(request, "resolver_match", None)
    if match and match.namespace == "digest":
        return format_html(
            '<a href="{}" aria-current="page" data-nav="digests">Digests</a>',
            reverse("digest:index"),
        )
    return format_html('<a href="{}" data-nav="digests">Digests</a>', reverse("digest:index"))
