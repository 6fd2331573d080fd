"""What every page's template sees: the site name, the live-status socket, the person's theme."""

from __future__ import annotations

from django.http import HttpRequest
from django.urls import reverse

from apps.core.heartbeat import worker_running

NAV = (
    ("chat", "Chat", "chats:index"),
    ("library", "Library", "library:index"),
    ("projects", "Projects", "projects:index"),
    ("drafts", "Drafts", "drafts:index"),
    ("jobs", "Jobs", "core:jobs"),
    ("settings", "Settings", "accounts:preferences"),
)


def shell(request: HttpRequest) -> dict:
    """What base.html needs on every page: navigation and the theme."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"nav_items": [], "theme": "system"}
    current = getattr(request, "resolver_match", None)
    namespace = current.namespace if current else ""
    url_name = f"{namespace}:{current.url_name}" if current else ""
    items = []
    for key, label, url in NAV:
        app = url.split(":", 1)[0]
        active = namespace == app and (app != "accounts" or url_name == url)
        items.append({"key": key, "label": label, "url": reverse(url), "active": active})
    if user.is_staff:
        items.append(
            {"key": "admin", "label": "Admin", "url": reverse("admin:index"), "active": False}
        )
    # Everyone sees when the worker is down: their uploads and syncs wait for it.
    return {"nav_items": items, "theme": user.theme, "worker_running": worker_running()}
