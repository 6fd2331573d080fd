"""Which pages may open a websocket: those of this site, exactly.

A browser sends cookies with a websocket handshake whatever page opens it, so
the Origin header is what stops another web app from opening authenticated
sockets as the person. channels' AllowedHostsOriginValidator compares only the
Origin's host with ALLOWED_HOSTS: a page served by another program on the same
machine (http://localhost:9999) passed for a Jarvis on :8000. Here the Origin's
scheme, host and port must be those the socket was opened on (the Host header,
and the scheme, which a trusted proxy may state in X-Forwarded-Proto), or one of
JARVIS_ALLOWED_ORIGINS.
"""

from __future__ import annotations

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.http.request import split_domain_port, validate_host

from apps.core.addresses import origin_normalize
from apps.core.proxy import is_trusted_proxy

_SCHEMES = {"ws": "http", "wss": "https", "http": "http", "https": "https"}


def _header(scope: dict, name: bytes) -> str | None:
    values = [value for key, value in scope.get("headers", []) if key.lower() == name]
    if len(values) != 1:
        return None  # none, or several (a forged duplicate): neither is believed
    try:
        return values[0].decode("ascii")
    except UnicodeDecodeError:
        return None


def _allowed_hosts() -> list[str]:
    # As Django's own Host check: with DEBUG on and nothing configured, localhost.
    if settings.DEBUG and not settings.ALLOWED_HOSTS:
        return [".localhost", "127.0.0.1", "[::1]"]
    return settings.ALLOWED_HOSTS


def site_origin(scope: dict) -> str | None:
    """The origin of the site as this connection reached it, or None when its
    Host is not one Jarvis answers to."""
    host = _header(scope, b"host")
    if not host:
        return None
    domain, _port = split_domain_port(host)
    if not domain or not validate_host(domain, _allowed_hosts()):
        return None
    scheme = _SCHEMES.get(scope.get("scheme", "ws"), "http")
    client = scope.get("client") or (None,)
    forwarded = _header(scope, b"x-forwarded-proto")
    if forwarded in ("http", "https") and is_trusted_proxy(client[0]):
        scheme = forwarded
    return origin_normalize(f"{scheme}://{host}")


def origin_allowed(scope: dict) -> bool:
    site = site_origin(scope)
    origin = origin_normalize(_header(scope, b"origin") or "")
    if site is None or origin is None:
        return False
    return origin == site or origin in settings.ALLOWED_ORIGINS


class SameOriginValidator:
    """ASGI middleware: a websocket whose Origin is not this site's is refused
    before any consumer runs (the handshake gets a 403)."""

    def __init__(self, application) -> None:
        self.application = application

    async def __call__(self, scope, receive, send):
        if scope["type"] == "websocket" and not origin_allowed(scope):
            return await WebsocketDenier.as_asgi()(scope, receive, send)
        return await self.application(scope, receive, send)
