"""The permission gate every agent endpoint sits behind."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse

from apps.agents.selectors import may_use_agents


def agents_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """403 for a signed-in person without the "use agent chats" permission.
    Put it under login_required. A 403 here leaks nothing: it is the same for
    every id, and says only what the person already knows (their permission)."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not may_use_agents(user=request.user):
            raise PermissionDenied("agent chats are not enabled for you")
        return view(request, *args, **kwargs)

    return wrapped
