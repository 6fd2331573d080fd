"""Making, revoking and checking MCP access tokens.

A token is 32 random bytes (URL-safe), so a fast hash is the right one to
store: there is nothing to brute-force that a slow hash would protect
(unlike a password). A lookup compares hashes in the database."""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from django.utils import timezone

from apps.accounts.models import User
from apps.core.errors import Refused
from apps.mcp.models import McpToken

TOKEN_PREFIX = "jarvis_"  # noqa: S105  (a label on every token, not a secret)
MAX_ACTIVE = 20
USE_RECORDED_EVERY = timedelta(minutes=1)


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def tokens_of(user: User) -> QuerySet[McpToken]:
    return McpToken.objects.filter(owner=user)


def token_for(user: User, pk: int) -> McpToken:
    # 404, not 403: another person's token does not exist for you.
    return get_object_or_404(tokens_of(user), pk=pk)


def token_create(*, owner: User, name: str) -> tuple[McpToken, str]:
    """A new token; returns the row and the token itself (shown once, never stored)."""
    name = " ".join((name or "").split())[:80] or "MCP app"
    if tokens_of(owner).filter(revoked_at=None).count() >= MAX_ACTIVE:
        raise Refused(f"you already have {MAX_ACTIVE} active tokens: revoke one first")
    plain = TOKEN_PREFIX + secrets.token_urlsafe(32)
    row = McpToken.objects.create(
        owner=owner, name=name, prefix=plain[: len(TOKEN_PREFIX) + 6], token_hash=_hash(plain)
    )
    return row, plain


def token_revoke(*, token: McpToken) -> None:
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])


def user_for_token(plain: str) -> User | None:
    """The active person a token belongs to, or None (unknown, revoked, or a
    disabled account)."""
    if not plain or not plain.startswith(TOKEN_PREFIX) or len(plain) > 200:
        return None
    row = (
        McpToken.objects.select_related("owner")
        .filter(token_hash=_hash(plain), revoked_at=None, owner__is_active=True)
        .first()
    )
    if row is None:
        return None
    now = timezone.now()
    if row.last_used_at is None or now - row.last_used_at > USE_RECORDED_EVERY:
        McpToken.objects.filter(pk=row.pk).update(last_used_at=now)
    return row.owner
