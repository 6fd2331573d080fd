"""Opening a test websocket as a signed-in person."""

from __future__ import annotations

import base64
import os
import socket
from urllib.parse import urlsplit

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


def handshake_request(base_url: str, path: str, headers: dict[str, str]) -> bytes:
    """A browser's websocket Upgrade request for `path`, as bytes on the wire
    (Host from `base_url` unless `headers` name one)."""
    request = [
        f"GET {path} HTTP/1.1",
        "Upgrade: websocket",
        "Connection: Upgrade",
        f"Sec-WebSocket-Key: {base64.b64encode(os.urandom(16)).decode()}",
        "Sec-WebSocket-Version: 13",
        *(f"{name}: {value}" for name, value in headers.items()),
    ]
    if not any(name.lower() == "host" for name in headers):
        request.append(f"Host: {urlsplit(base_url).netloc}")
    return ("\r\n".join(request) + "\r\n\r\n").encode()


def websocket_handshake(
    base_url: str, path: str, headers: dict[str, str], *, timeout: float = 10
) -> tuple[int, str]:
    """Open a websocket on a live server as a browser would (a raw HTTP/1.1
    Upgrade request, so nothing is added or fixed up on the way) and return the
    handshake's status code (101: accepted) and the whole response head and body
    read so far."""
    url = urlsplit(base_url)
    with socket.create_connection((url.hostname, url.port), timeout=timeout) as sock:
        sock.sendall(handshake_request(base_url, path, headers))
        received = b""
        while b"\r\n\r\n" not in received:
            chunk = sock.recv(65536)
            if not chunk:
                break
            received += chunk
        status_line = received.split(b"\r\n", 1)[0].decode("latin-1")
        if not status_line.startswith("HTTP/1.1 101"):
            sock.settimeout(1)
            try:  # the body of a refusal (an error page, or a traceback)
                while chunk := sock.recv(65536):
                    received += chunk
            except TimeoutError:
                pass
    return int(status_line.split()[1]), received.decode("utf-8", "replace")
