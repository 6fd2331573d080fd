"""Accounts: the only write path for users, sessions and sign-in throttling."""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import Group
from django.contrib.auth.password_validation import validate_password
from django.contrib.sessions.models import Session
from django.db import transaction
from django.utils import timezone

from apps.accounts.models import HOUSEHOLD_GROUP, LoginFailure, User
from apps.core.errors import AlreadyExists
from apps.core.realtime import close_sockets, session_group

logger = logging.getLogger(__name__)


def household_group() -> Group:
    group, _ = Group.objects.get_or_create(name=HOUSEHOLD_GROUP)
    return group


def user_create(
    *,
    username: str,
    password: str,
    display_name: str = "",
    is_admin: bool = False,
    household: bool = True,
    validate: bool = True,
) -> User:
    """Create a person. Raises AlreadyExists for a taken name (case-insensitive)
    and django's ValidationError for a weak password when `validate` is set."""
    username = username.strip()
    if User.objects.filter(username__iexact=username).exists():
        raise AlreadyExists(f"a user named {username!r} already exists")
    user = User(username=username, display_name=display_name.strip())
    if validate:
        validate_password(password, user)
    user.set_password(password)
    user.is_staff = is_admin
    user.is_superuser = is_admin
    with transaction.atomic():
        user.save()
        if household:
            user.groups.add(household_group())
    logger.info("created user %s (admin=%s)", username, is_admin)
    return user


def user_set_password(*, user: User, password: str, validate: bool = True) -> None:
    if validate:
        validate_password(password, user)
    user.set_password(password)
    user.save(update_fields=["password"])
    # A new password invalidates the other sessions (Django's session hash check).


def user_set_active(*, user: User, active: bool) -> int:
    """Enable or disable a person. Disabling ends every session they have and
    returns how many were ended."""
    user.is_active = active
    user.save(update_fields=["is_active"])
    return 0 if active else end_sessions_of(user=user)


def end_sessions_of(*, user: User) -> int:
    ended = 0
    # Sessions are signed blobs keyed by session key, so finding a user's means
    # decoding the live ones; a household server has a handful.
    for session in Session.objects.filter(expire_date__gt=timezone.now()).iterator():
        if str(session.get_decoded().get("_auth_user_id")) == str(user.pk):
            close_sockets(session_group(session.session_key))
            session.delete()
            ended += 1
    return ended


def preferences_update(*, user: User, display_name: str, theme: str) -> None:
    user.display_name = display_name.strip()
    user.theme = theme
    user.save(update_fields=["display_name", "theme"])


# --- Sign-in throttling ---------------------------------------------------


def login_wait_seconds(*, username: str, ip: str | None) -> int:
    """Seconds until another sign-in attempt is allowed (0: allowed now).

    Counted per username and per client address over a sliding window, so
    guessing one person's password and spraying many names both hit a limit.
    """
    window = timedelta(seconds=settings.LOGIN_THROTTLE_SECONDS)
    since = timezone.now() - window
    recent = LoginFailure.objects.filter(at__gte=since)
    waits = []
    checks = [(recent.filter(username__iexact=username), settings.LOGIN_FAILURES_PER_USERNAME)]
    if ip:
        checks.append((recent.filter(ip=ip), settings.LOGIN_FAILURES_PER_IP))
    for failures, limit in checks:
        times = list(failures.order_by("-at").values_list("at", flat=True)[:limit])
        if len(times) >= limit:
            # Allowed again once the oldest of the last `limit` failures leaves the window.
            waits.append((times[-1] + window - timezone.now()).total_seconds())
    return max(0, int(max(waits, default=0)) + (1 if waits else 0))


def login_failure_record(*, username: str, ip: str | None) -> None:
    LoginFailure.objects.create(username=username[:150], ip=ip or None)


def login_failures_clear(*, username: str) -> None:
    LoginFailure.objects.filter(username__iexact=username).delete()


def login_failures_prune() -> int:
    cutoff = timezone.now() - timedelta(seconds=settings.LOGIN_THROTTLE_SECONDS)
    deleted, _ = LoginFailure.objects.filter(at__lt=cutoff).delete()
    return deleted
