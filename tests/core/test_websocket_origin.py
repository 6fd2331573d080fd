"""A websocket opens only from a page of this site: the Origin's scheme, host
and port must be the ones the socket was opened on (or JARVIS_ALLOWED_ORIGINS).
Checked with real handshakes against a live daphne."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.test import Client

from tests.support.processes import daphne_server
from tests.support.sockets import websocket_handshake

pytestmark = pytest.mark.django_db(transaction=True)


def session_cookie(user) -> str:
    client = Client()
    client.force_login(user)
    return f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"


def test_only_this_sites_origin_opens_a_socket(member):
    cookie = session_cookie(member)
    with daphne_server() as base:
        port = base.rsplit(":", 1)[1]
        site = f"127.0.0.1:{port}"

        def status(origin: str | None, host: str = site, **extra: str) -> int:
            headers = {"Host": host, "Cookie": cookie, **extra}
            if origin is not None:
                headers["Origin"] = origin
            return websocket_handshake(base, "/ws/ping/", headers)[0]

        assert status(f"http://{site}") == 101
        assert status(f"HTTP://127.0.0.1:{port}/") == 101  # the same origin, spelt differently
        # Another program on the same machine, on another port: refused.
        assert status("http://127.0.0.1:9999") == 403
        assert status("http://127.0.0.1") == 403  # port 80
        assert status(f"https://{site}") == 403  # another scheme
        # A host Jarvis also answers to is still another site.
        assert status(f"http://localhost:{port}") == 403
        assert status("http://evil.example") == 403
        assert status("null") == 403
        assert status(None) == 403
        # A Host Jarvis does not answer to, with an Origin to match it.
        assert status(f"http://evil.example:{port}", host=f"evil.example:{port}") == 403
        # X-Forwarded-Proto from a client that is not a trusted proxy is ignored.
        assert status(f"https://{site}", **{"X-Forwarded-Proto": "https"}) == 403


def test_allowed_origins_and_a_trusted_proxys_scheme(member):
    cookie = session_cookie(member)
    with daphne_server(
        JARVIS_ALLOWED_ORIGINS="http://localhost:9999", JARVIS_TRUSTED_PROXIES="127.0.0.1"
    ) as base:
        port = base.rsplit(":", 1)[1]
        site = f"127.0.0.1:{port}"

        def status(origin: str, **extra: str) -> int:
            headers = {"Host": site, "Cookie": cookie, "Origin": origin, **extra}
            return websocket_handshake(base, "/ws/ping/", headers)[0]

        assert status("http://localhost:9999") == 101
        assert status("http://localhost:9998") == 403
        # nginx terminating TLS says so; the page's origin is then https.
        assert status(f"https://{site}", **{"X-Forwarded-Proto": "https"}) == 101
        assert status(f"http://{site}", **{"X-Forwarded-Proto": "https"}) == 403
