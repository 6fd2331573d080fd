"""What every management command that acts for a person needs: the person."""

from __future__ import annotations

from django.core.management.base import CommandError

from apps.accounts.models import User


def user_named(name: str, *, active: bool = False) -> User:
    """The user called `name` (any case); CommandError when there is none (or,
    with `active`, when the account is disabled)."""
    users = User.objects.filter(is_active=True) if active else User.objects.all()
    try:
        return users.get(username__iexact=name)
    except User.DoesNotExist:
        what = "active user" if active else "user"
        raise CommandError(f"no {what} named {name!r}") from None
