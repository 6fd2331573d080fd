"""What every fake server shares: serving real HTTP from a thread of its own,
started and stopped around a test (`with FakeX() as fake:`)."""

from __future__ import annotations

import socketserver
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class ServedFake:
    _server: socketserver.BaseServer | None = None
    _thread: threading.Thread | None = None
    # A BaseHTTPRequestHandler subclass that reaches the fake as `self.owner`;
    # fakes with a server of their own override make_server instead.
    handler: type | None = None

    def make_server(self) -> socketserver.BaseServer:
        handler = type("Handler", (self.handler,), {"owner": self})
        return quiet_local_server(handler)

    @property
    def base_url(self) -> str:
        assert self._server is not None, "start the fake first"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self):
        self._server = self.make_server()
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()


def quiet_local_server(handler: type) -> ThreadingHTTPServer:
    """A threaded server on a free loopback port that never blocks teardown and
    ignores clients that hang up (several tests do it on purpose)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    server.block_on_close = False
    server.handle_error = lambda request, address: None
    return server


class QuietHandler(BaseHTTPRequestHandler):
    """A keep-alive handler that logs nothing and answers with one call."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args) -> None:
        pass

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
