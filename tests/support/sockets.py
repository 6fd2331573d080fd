"""Opening a test websocket as a signed-in person."""

from __future__ import annotations

from django.conf import settings
from django.test import Client


def session_headers(user) -> list[tuple[bytes, bytes]]:
    """Headers of a browser tab of `user` on this site: Host, Origin, session cookie."""
    client = Client()
    client.force_login(user)
    cookie = client.cookies[settings.SESSION_COOKIE_NAME].value
    return [
        (b"host", b"localhost"),
        (b"origin", b"http://localhost"),
        (b"cookie", f"{settings.SESSION_COOKIE_NAME}={cookie}".encode()),
    ]
