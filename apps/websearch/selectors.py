"""Reads: the provider in use, and whether a person may search the web.

The permission is read fresh from the database each time (Django caches
permissions on a user object, and a turn holds its user from the start):
an admin taking it away stops the next call, not the next login. The
permission is the accounts flag ticked on a group's admin page."""

from __future__ import annotations

from django.contrib.auth import get_user_model

from apps.accounts.permissions import USE_WEB_SEARCH
from apps.websearch.models import SearchProvider


def active_provider() -> SearchProvider | None:
    """The enabled provider (the first by name when several are enabled), or None."""
    return SearchProvider.objects.filter(enabled=True).order_by("name").first()


def may_search_web(*, user) -> bool:
    if user is None or not getattr(user, "pk", None):
        return False
    fresh = get_user_model().objects.filter(pk=user.pk, is_active=True).first()
    # has_perm is False for inactive users; superusers pass.
    return fresh is not None and fresh.has_perm(USE_WEB_SEARCH)


def web_search_available(*, user) -> bool:
    """Whether chats offer `user` the web search at all: a provider is
    configured and enabled, and they have the "use web search" permission."""
    return active_provider() is not None and may_search_web(user=user)
