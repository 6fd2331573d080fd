"""`{% settings_nav %}`: the Settings menu, built from the registered Settings pages."""

from __future__ import annotations

from django import template
from django.urls import reverse

from apps.accounts.settings_pages import settings_pages_for

register = template.Library()


@register.inclusion_tag("accounts/_settings_nav.html", takes_context=True)
def settings_nav(context) -> dict:
    request = context["request"]
    current = request.resolver_match.view_name if request.resolver_match else ""
    pages = [
        {"label": page.label, "url": reverse(page.url_name), "active": page.url_name == current}
        for page in settings_pages_for(request.user)
    ]
    return {"pages": pages}
