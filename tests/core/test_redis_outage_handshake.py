"""A websocket opened while the shared Redis is away (JARVIS_CHANNEL_LAYER=
redis://…), against a real daphne and Debian's redis-server: the handshake
is refused cleanly (403, no 500, no traceback of ours in the log, the outage
logged once and without the Redis password), and when Redis is back a new
socket opens and follows frames that travel through Redis
(apps.core.consumers.LayerGuardedConsumer)."""

from __future__ import annotations

import re
import socket
import struct
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from channels.layers import channel_layers
from django.conf import settings
from django.test import Client

from apps.chats.models import Chat
from apps.core.notices import notice_send
from jarvis_site.env import env_channel_layers
from tests.support.processes import daphne_server
from tests.support.redis_server import Redis
from tests.support.sockets import handshake_request, websocket_handshake

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "redis-Pa55word-never-logged"
REFUSED_LINE = "websocket refused: the channel layer"


@pytest.fixture
def password_redis():
    # A password no log line may show.
    server = Redis(password=PASSWORD)
    server.start()
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def fresh_layers():
    channel_layers.backends.clear()
    yield
    channel_layers.backends.clear()


def daphne_logging_to(log: Path, **env: str):
    """A real daphne whose stdout and stderr go to `log`; yields its base URL."""
    return daphne_server(log, **env)


class LiveSocket:
    """An accepted websocket on a live server, read frame by frame (server
    frames are unmasked; pings and other control frames are skipped)."""

    def __init__(self, sock: socket.socket, pending: bytes) -> None:
        self.sock = sock
        self.buffer = pending

    def _take(self, size: int, deadline: float) -> bytes:
        while len(self.buffer) < size:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            self.sock.settimeout(left)
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("the server closed the connection")
            self.buffer += chunk
        data, self.buffer = self.buffer[:size], self.buffer[size:]
        return data

    def text(self, timeout: float) -> str:
        """The next text frame."""
        deadline = time.monotonic() + timeout
        while True:
            first, second = self._take(2, deadline)
            length = second & 0x7F
            if length == 126:
                length = struct.unpack(">H", self._take(2, deadline))[0]
            elif length == 127:
                length = struct.unpack(">Q", self._take(8, deadline))[0]
            payload = self._take(length, deadline)
            opcode = first & 0x0F
            if opcode == 0x8:
                raise ConnectionError(f"closed by the server: {payload!r}")
            if opcode == 0x1:
                return payload.decode()

    def texts_until(self, found, timeout: float) -> list[str]:
        """Text frames until one satisfies `found` (or the time is up)."""
        frames: list[str] = []
        deadline = time.monotonic() + timeout
        while not any(found(frame) for frame in frames):
            try:
                frames.append(self.text(max(0.0, deadline - time.monotonic())))
            except TimeoutError:
                break
        return frames

    def quiet(self, seconds: float) -> list[str]:
        """Whatever comes in the next `seconds`."""
        return self.texts_until(lambda frame: False, seconds)


@contextmanager
def live_socket(base_url: str, path: str, headers: dict[str, str]) -> Iterator[LiveSocket]:
    url = urlsplit(base_url)
    with socket.create_connection((url.hostname, url.port), timeout=10) as sock:
        sock.sendall(handshake_request(base_url, path, headers))
        received = b""
        while b"\r\n\r\n" not in received:
            chunk = sock.recv(65536)
            assert chunk, f"the server hung up during the handshake: {received!r}"
            received += chunk
        head, pending = received.split(b"\r\n\r\n", 1)
        assert head.startswith(b"HTTP/1.1 101"), head.decode("latin-1")
        yield LiveSocket(sock, pending)


def handshake(base_url: str, path: str, headers: dict[str, str]) -> int:
    """The handshake's status: 101 (open) or 403 (refused), never a 500 or a
    traceback, whatever the channel layer is doing."""
    status, response = websocket_handshake(base_url, path, headers)
    assert status in (101, 403), response
    assert "Internal server error" not in response and "Traceback" not in response
    return status


def wait_until_refused(base_url: str, headers: dict[str, str]) -> None:
    """The first sockets after Redis went may still open: redis-py's
    SUBSCRIBE is a write that waits for no answer, and a write into a
    connection whose peer just died succeeds. Once the process has noticed
    (within a second), every new socket is refused."""
    deadline = time.monotonic() + 30
    while handshake(base_url, "/ws/ping/", headers) == 101:
        assert time.monotonic() < deadline, "a socket still opened 30 s into the outage"
        time.sleep(0.2)


def session_cookie(user) -> str:
    client = Client()
    client.force_login(user)
    return f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"


def test_a_socket_opened_while_redis_is_away_is_refused_cleanly_and_opens_once_it_is_back(
    owner, password_redis, settings, monkeypatch, tmp_path
):
    log = tmp_path / "daphne.log"
    chat = Chat.objects.create(owner=owner)
    # The toast below can only come through Redis: the catch-up would take an hour.
    env = {"JARVIS_CHANNEL_LAYER": password_redis.url, "JARVIS_NOTICE_CATCH_UP_SECONDS": "3600"}
    with daphne_logging_to(log, **env) as base:
        cookie = session_cookie(owner)
        headers = {"Origin": base, "Cookie": cookie}
        secrets = [PASSWORD, cookie.split("=", 1)[1]]  # the session key is a login
        with live_socket(base, "/ws/ping/", headers) as ping:  # Redis up: as always
            assert 'data-state="live"' in ping.text(timeout=15)

        password_redis.stop()
        wait_until_refused(base, headers)
        for path in ("/ws/ping/", f"/ws/chats/{chat.pk}/", "/ws/ping/"):
            assert handshake(base, path, headers) == 403
        text = log.read_text()
        assert text.count(REFUSED_LINE) == 1, text  # the outage once, not each retry
        assert "Exception inside application" not in text, text
        assert not [secret for secret in secrets if secret in text]

        password_redis.start()  # back on the same port: the process reconnects by itself
        with live_socket(base, "/ws/ping/", headers) as ping:
            assert 'data-state="live"' in ping.text(timeout=15)
            ping.quiet(1.0)  # the socket's first frames (bell, toasts) are out: it has joined
            # Another process's notice (here: this test's, on the same Redis)
            # reaches the new socket through Redis.
            monkeypatch.setenv("JARVIS_CHANNEL_LAYER", password_redis.url)
            settings.CHANNEL_LAYERS = env_channel_layers("JARVIS_CHANNEL_LAYER")
            channel_layers.backends.clear()
            notice_send(user_id=owner.pk, text="The backup is done")
            frames = ping.texts_until(lambda frame: "The backup is done" in frame, timeout=15)
            assert any("The backup is done" in frame for frame in frames), frames

        text = log.read_text()
        assert re.search(r"the channel layer answers again; \d+ websocket\(s\) were refused", text)
        assert "Exception inside application" not in text, text
        assert not [secret for secret in secrets if secret in text]


# --- the page, in Chromium


@pytest.fixture
def chromium(monkeypatch):
    # Playwright's sync API runs an event loop in this thread; the test's own
    # ORM calls (the notice below) are ordinary sync code.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    from playwright.sync_api import sync_playwright

    from tests.e2e.conftest import CHROMIUM_ARGS, chromium_path

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.mark.e2e
def test_the_page_says_offline_keeps_retrying_and_goes_live_when_redis_is_back(
    owner, redis, chromium, settings, monkeypatch, tmp_path
):
    from tests.support.browser import collect_errors, sign_in

    log = tmp_path / "daphne.log"
    env = {"JARVIS_CHANNEL_LAYER": redis.url, "JARVIS_NOTICE_CATCH_UP_SECONDS": "3600"}
    with daphne_logging_to(log, **env) as base:
        page = chromium.new_context(viewport={"width": 1280, "height": 800}).new_page()
        page.set_default_timeout(15_000)
        errors = collect_errors(page)
        failures: list[str] = []
        page.on("pageerror", lambda exc: failures.append(str(exc)))
        sign_in(page, base)
        badge = page.locator("#live-status")
        badge.filter(has_text="Live").wait_for()

        redis.stop()
        wait_until_refused(base, {"Origin": base, "Cookie": session_cookie(owner)})
        refused_before = log.read_text().count('"WSREJECT /ws/ping/"')
        page.reload()  # the page's sockets are opened anew, while Redis is away
        badge.filter(has_text="Offline").wait_for()
        # It keeps trying (htmx's ws extension, with backoff): refused again.
        deadline = time.monotonic() + 30
        while log.read_text().count('"WSREJECT /ws/ping/"') < refused_before + 2:
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        assert page.locator("body").is_visible()  # the page itself works by plain requests
        page.get_by_role("link", name="Library").first.click()
        page.wait_for_url(f"{base}/library/**")
        badge.filter(has_text="Offline").wait_for()

        redis.start()
        badge.filter(has_text="Live").wait_for(timeout=30_000)  # the next retry opens it
        page.wait_for_timeout(1000)  # its first frames are out: it has joined its groups
        monkeypatch.setenv("JARVIS_CHANNEL_LAYER", redis.url)
        settings.CHANNEL_LAYERS = env_channel_layers("JARVIS_CHANNEL_LAYER")
        channel_layers.backends.clear()
        # From a thread of its own: Playwright's loop runs in this one, where
        # the layer's async_to_sync cannot.
        with ThreadPoolExecutor(1) as other:
            other.submit(notice_send, user_id=owner.pk, text="The backup is done").result()
        page.locator("[data-testid=toast]", has_text="The backup is done").wait_for()

    # No script of the page failed. The console's only errors are about the
    # refused handshakes: the browser's own line, and htmx logging the
    # socket's error event (as it does for a server restart).
    assert failures == []
    expected = ("WebSocket connection to", "[object Event]")
    assert [e for e in errors if not e.startswith(expected)] == [], errors
    assert "Exception inside application" not in log.read_text()
