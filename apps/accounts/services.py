"""Accounts: the only write path for users, sessions and sign-in throttling."""

from __future__ import annotations

import logging
import math
import unicodedata
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth.models import Group, Permission
from django.contrib.auth.password_validation import validate_password
from django.contrib.sessions.models import Session
from django.db import transaction
from django.utils import timezone

from apps.accounts import permissions
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


def preferences_update(
    *, user: User, display_name: str, theme: str, send_with_ctrl_enter: bool | None = None
) -> None:
    user.display_name = display_name.strip()
    user.theme = theme
    fields = ["display_name", "theme"]
    if send_with_ctrl_enter is not None:  # the header's theme toggle leaves it alone
        user.send_with_ctrl_enter = send_with_ctrl_enter
        fields.append("send_with_ctrl_enter")
    user.save(update_fields=fields)


# --- Sign-in throttling ---------------------------------------------------
#
# Failures are counted per (name, address) and per address over a sliding
# window. Per (name, address), so that someone guessing one person's password
# locks that name on their own address only: another person signing in from
# the same home router is not affected, nor is the guessed person elsewhere.
# Per address, so that trying many names from one place also stops.
#
# An attempt is checked and recorded as a failure in one write transaction
# *before* its password is verified, and the record is removed if the password
# was right. Checking first and recording after the (slow, deliberately) hash
# let thirty parallel guesses all pass the check before any was recorded.


@dataclass(frozen=True)
class SignInAttempt:
    username: str
    ip: str | None
    # The failure recorded for this attempt while its password is checked.
    failure_id: int | None = None
    # Set when the attempt was refused: when the next one will be allowed, and why.
    retry_at: datetime | None = None
    reason: str = ""

    @property
    def refused(self) -> bool:
        return self.retry_at is not None

    def refusal_message(self) -> str:
        if self.retry_at is None:
            return ""
        wait = max(1, math.ceil((self.retry_at - timezone.now()).total_seconds() / 60))
        at = timezone.localtime(self.retry_at).strftime("%H:%M")
        return (
            f"Too many failed sign-in attempts {self.reason}. "
            f"Try again at {at} (in about {wait} minute{'s' if wait != 1 else ''})."
        )


def _name_key(username: str) -> str:
    # The form signs in " olivia" and full-width "olivia" as they normalise (NFKC,
    # stripped); counting them apart would give a guesser extra tries per name.
    return unicodedata.normalize("NFKC", username).strip().casefold()[:150]


def _retry_at(*, username: str, ip: str | None) -> tuple[datetime | None, str]:
    window = timedelta(seconds=settings.LOGIN_THROTTLE_SECONDS)
    recent = LoginFailure.objects.filter(at__gte=timezone.now() - window)
    checks = [
        (
            recent.filter(username=username, ip=ip),
            settings.LOGIN_FAILURES_PER_USERNAME,
            "for this name from your address",
        ),
        (recent.filter(ip=ip), settings.LOGIN_FAILURES_PER_IP, "from your address"),
    ]
    latest: tuple[datetime | None, str] = (None, "")
    for failures, limit, reason in checks:
        times = list(failures.order_by("-at").values_list("at", flat=True)[:limit])
        if len(times) >= limit:
            # Allowed again once the oldest of the last `limit` failures leaves the window.
            allowed_at = times[-1] + window
            if latest[0] is None or allowed_at > latest[0]:
                latest = (allowed_at, reason)
    return latest


def login_attempt_start(*, username: str, ip: str | None) -> SignInAttempt:
    """Admit or refuse a sign-in attempt before its password is checked.

    Admitted attempts are recorded as failures at once, in the same write
    transaction as the check (IMMEDIATE: parallel attempts, from any process,
    take their turn here), so at most the limit of them is ever verified.
    Call `login_attempt_succeeded` if the password turns out right."""
    username = _name_key(username)
    with transaction.atomic():
        retry_at, reason = _retry_at(username=username, ip=ip)
        if retry_at is not None:
            return SignInAttempt(username=username, ip=ip, retry_at=retry_at, reason=reason)
        failure = LoginFailure.objects.create(username=username, ip=ip)
    return SignInAttempt(username=username, ip=ip, failure_id=failure.pk)


def login_attempt_succeeded(*, attempt: SignInAttempt) -> None:
    """The password was right: this attempt, and this name's earlier failures
    from this address, no longer count."""
    LoginFailure.objects.filter(username=attempt.username, ip=attempt.ip).delete()


def login_failures_clear(*, username: str | None = None, ip: str | None = None) -> int:
    """Lift a lock (`manage.py users unlock`): the failures of a name, from
    every address, or of an address, for every name. Returns how many."""
    if not username and not ip:
        raise ValueError("give a username or an address")
    failures = LoginFailure.objects.all()
    if username:
        failures = failures.filter(username=_name_key(username))
    if ip:
        failures = failures.filter(ip=ip)
    deleted, _ = failures.delete()
    return deleted


def login_failures_prune() -> int:
    cutoff = timezone.now() - timedelta(seconds=settings.LOGIN_THROTTLE_SECONDS)
    deleted, _ = LoginFailure.objects.filter(at__lt=cutoff).delete()
    return deleted


def flag_permissions() -> list[Permission]:
    """The Permission rows of the Jarvis flags, in `ALL_FLAGS` order."""
    codenames = [permissions.codename(flag) for flag in permissions.ALL_FLAGS]
    rows = Permission.objects.filter(content_type__app_label="accounts", codename__in=codenames)
    by_codename = {row.codename: row for row in rows}
    return [by_codename[name] for name in codenames if name in by_codename]


def group_set_flags(*, group: Group, flags: set[str] | frozenset[str]) -> None:
    """Give `group` exactly `flags` among the Jarvis flags: the ticked ones are
    added, the others removed; its other Django permissions are left alone."""
    unknown = set(flags) - set(permissions.ALL_FLAGS)
    if unknown:
        raise ValueError(f"not Jarvis permission flags: {sorted(unknown)}")
    wanted = {permissions.codename(flag) for flag in flags}
    rows = flag_permissions()
    group.permissions.remove(*[row for row in rows if row.codename not in wanted])
    group.permissions.add(*[row for row in rows if row.codename in wanted])
