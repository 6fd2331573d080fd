"""Settings → Claude, Cursor (MCP): a person's access tokens for /mcp/.

A new token is shown once: the POST that made it keeps the secret in the
person's session and redirects; the next GET of the page takes it out and
shows it (post/redirect/get, so a reload neither makes a second token nor
shows the secret again)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from apps.core.errors import JarvisError
from apps.mcp import MCP_PATH
from apps.mcp.tokens import token_create, token_for, token_revoke, tokens_of

# The session key (not a secret) under which a new token waits for its one showing.
NEW_TOKEN_KEY = "mcp_new_token"  # noqa: S105


def _page(request: HttpRequest, *, new_token: str = "", status: int = 200) -> HttpResponse:
    context = {
        "tokens": tokens_of(request.user),
        "new_token": new_token,
        "endpoint": request.build_absolute_uri(MCP_PATH),
        "username": request.user.username,
    }
    return render(request, "mcp/settings.html", context, status=status)


@never_cache
@login_required
@require_GET
def settings_page(request: HttpRequest) -> HttpResponse:
    return _page(request, new_token=request.session.pop(NEW_TOKEN_KEY, ""))


@never_cache
@login_required
@require_POST
def create(request: HttpRequest) -> HttpResponse:
    try:
        _, plain = token_create(owner=request.user, name=request.POST.get("name", ""))
    except JarvisError as exc:
        messages.error(request, str(exc))
        return redirect("mcp:settings")
    request.session[NEW_TOKEN_KEY] = plain  # until the page after the redirect shows it
    return redirect("mcp:settings")


@login_required
@require_POST
def revoke(request: HttpRequest, pk: int) -> HttpResponse:
    token = token_for(request.user, pk)
    token_revoke(token=token)
    messages.success(request, f"Revoked “{token.name}”: apps using it are refused from now on.")
    return redirect("mcp:settings")
