"""Request bodies bounded at the server, before any of them is read.

daphne's request class is Twisted's `Request`, which (unless told otherwise)
parses every multipart or urlencoded POST into `request.args` once the whole
body has arrived: `email.message_from_bytes` over the body, on the reactor
thread, for a value nothing in Jarvis reads (Django parses the body itself,
streaming files to disk through its upload handlers). Four anonymous 200 MB
posts cost daphne gigabytes and froze every other request. So:

- Twisted's form parsing is off (`parsePOSTFormSubmission=False`);
- a Content-Length above the bound is answered 413 as soon as the headers are
  in, before a byte of the body is read; a chunked body (no Content-Length) is
  counted as it arrives and cut off the same way; a Content-Length that lies
  short only means less is read (Twisted reads exactly that many bytes);
- a request that carries no credential (no session cookie, no Authorization
  header) gets a small bound: nothing a signed-out person may post (sign-in,
  sign-up) is larger, and a forged cookie only buys the upload bound;
- a body must arrive within a deadline that grows with its size, so a
  slow-loris upload does not hold a connection (and its temp file) for hours.

Below 100 kB Twisted keeps a body in memory, above that in an anonymous temp
file. daphne itself would then read the whole file into its application queue
in one loop on the event loop (a 45 MB upload: 45 MB in memory, every other
request waiting); instead the request hands the application the file, and
`streamed()` reads it to the application 64 kB at a time, yielding to the
event loop between pieces. Django spools what it receives to disk above
FILE_UPLOAD_MAX_MEMORY_SIZE and its upload handlers stream files to disk.
`install()` and `streamed()` are both applied in jarvis_site/asgi.py, which
every daphne start imports (manage.py serve, the systemd unit, tests,
benches) before it listens.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from dataclasses import dataclass

from django.conf import settings

logger = logging.getLogger(__name__)

# Multipart framing and the form's other fields around one file at the limit.
MARGIN_BYTES = 1024 * 1024
# Sign-in and sign-up forms are well under a kilobyte.
ANONYMOUS_MAX_BYTES = 256 * 1024
# A body gets this long, plus a second per SLOWEST_BYTES_PER_SECOND it carries.
BODY_BASE_SECONDS = 60
SLOWEST_BYTES_PER_SECOND = 64 * 1024
# Pieces a handed-off body is read to the application in.
PIECE_BYTES = 64 * 1024

_streaming = {"installed": False}


class _BodyFile(bytes):
    """An empty body that carries the request's body file: what daphne puts
    in the queue instead of the body itself (see `_HandOff`)."""

    file = None


class _HandOff:
    """Stands in for a request's body file while daphne hands the request to
    the application: daphne's loop `read(8192)`s it to the end into the
    queue; here its first sized read returns an empty `_BodyFile` pointing at
    the real file (so daphne queues one message and stops), and `streamed()`
    does the reading. Everything else goes to the real file (Twisted closes it
    when the request is done)."""

    def __init__(self, real) -> None:
        self._real = real
        self._handed = False

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0 or self._handed:
            return self._real.read(size)
        self._handed = True
        marker = _BodyFile()
        marker.file = self._real
        return marker

    def __getattr__(self, name):
        return getattr(self._real, name)


def streamed(app):
    """ASGI middleware: read a handed-off body file to `app` in pieces."""
    _streaming["installed"] = True

    async def application(scope, receive, send):
        if scope["type"] != "http":
            return await app(scope, receive, send)
        state = {"file": None, "done": False}

        async def piecewise_receive():
            if state["done"]:
                return await receive()
            if state["file"] is None:
                message = await receive()
                body = message.get("body")
                if not isinstance(body, _BodyFile):
                    state["done"] = True
                    return message
                state["file"] = body.file
            try:
                piece = state["file"].read(PIECE_BYTES)
            except ValueError:  # closed under us: the client went away
                state["done"] = True
                return {"type": "http.disconnect"}
            more = len(piece) == PIECE_BYTES
            state["done"] = not more
            # Let every other request run between two pieces of this body.
            await asyncio.sleep(0)
            return {"type": "http.request", "body": piece, "more_body": more}

        return await app(scope, piecewise_receive, send)

    return application


@dataclass(frozen=True)
class Bounds:
    credentialed_max: int
    anonymous_max: int
    session_cookie: bytes


def bounds_from_settings() -> Bounds:
    # Read when daphne starts (install()), not when this module is imported.
    return Bounds(
        credentialed_max=settings.UPLOAD_MAX_MB * 1024 * 1024 + MARGIN_BYTES,
        anonymous_max=ANONYMOUS_MAX_BYTES,
        session_cookie=settings.SESSION_COOKIE_NAME.encode("ascii"),
    )


def body_deadline_seconds(length: int | None, bound: int) -> float:
    """How long a body of `length` bytes (None: chunked, up to `bound`) may take."""
    size = bound if length is None else length
    return BODY_BASE_SECONDS + size / SLOWEST_BYTES_PER_SECOND


def _refusal(status: bytes, text: str) -> bytes:
    body = (text + "\n").encode("ascii")
    return (
        b"HTTP/1.1 " + status + b"\r\n"
        b"Content-Type: text/plain; charset=utf-8\r\n"
        b"Content-Length: " + str(len(body)).encode("ascii") + b"\r\n"
        b"Connection: close\r\n\r\n" + body
    )


def request_class(base: type, bounds: Bounds):
    """daphne's request class `base` (its WebRequest) with the bounds above;
    built by install(), the one place that imports daphne."""

    class BoundedWebRequest(base):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            # Never parse the body into request.args (Django parses it, streaming).
            self._parsePOSTFormSubmission = False
            self._body_bound = bounds.anonymous_max
            self._body_seen = 0
            self._body_refused = False
            self._body_timer = None

        def _credentialed(self) -> bool:
            return bounds.session_cookie in self.received_cookies or self.requestHeaders.hasHeader(
                b"Authorization"
            )

        def _refuse(self, status: bytes, text: str) -> None:
            if self._body_refused:
                return
            self._body_refused = True
            self._cancel_timer()
            logger.warning(
                "refused a request body from %s: %s",
                getattr(self.client, "host", "?"),
                text,
            )
            channel = self.channel
            channel.transport.write(_refusal(status, text))
            channel.loseConnection()

        def _cancel_timer(self) -> None:
            if self._body_timer is not None and self._body_timer.active():
                self._body_timer.cancel()
            self._body_timer = None

        def gotLength(self, length: int | None) -> None:
            credentialed = self._credentialed()
            self._body_bound = bounds.credentialed_max if credentialed else bounds.anonymous_max
            if length is not None and length > self._body_bound:
                # Twisted still wants somewhere to put what the client sends
                # before the connection closes; a BytesIO that is never written.
                super().gotLength(0)
                self._refuse(b"413 Content Too Large", "request body too large")
                return
            super().gotLength(length)
            if length != 0:
                # The channel's clock is the reactor daphne serves on (Twisted's
                # HTTPFactory hands it over; its own timeouts use it too).
                self._body_timer = self.channel.callLater(
                    body_deadline_seconds(length, self._body_bound),
                    functools.partial(
                        self._refuse, b"408 Request Timeout", "request body too slow"
                    ),
                )

        def handleContentChunk(self, data: bytes) -> None:
            if self._body_refused:
                return
            self._body_seen += len(data)
            if self._body_seen > self._body_bound:
                # A chunked body has no Content-Length to refuse up front.
                self._refuse(b"413 Content Too Large", "request body too large")
                return
            super().handleContentChunk(data)

        def requestReceived(self, command, path, version) -> None:
            if self._body_refused:
                return
            self._cancel_timer()
            super().requestReceived(command, path, version)

        def process(self):
            # Bodies larger than one piece are read to the application by
            # `streamed()`, not queued whole by daphne (module docstring).
            if (
                _streaming["installed"]
                and self.content is not None
                and not isinstance(self.content, _HandOff)
                and self.content.seek(0, 2) > PIECE_BYTES
                and not self.requestHeaders.hasHeader(b"Upgrade")
            ):
                self.content.seek(0, 0)
                self.content = _HandOff(self.content)
            elif self.content is not None and not isinstance(self.content, _HandOff):
                self.content.seek(0, 0)
            return super().process()

        def connectionLost(self, reason) -> None:
            self._cancel_timer()
            super().connectionLost(reason)

    return BoundedWebRequest


def install() -> None:
    """Make daphne build its requests from the bounded class (idempotent)."""
    # Here, not at the top: daphne imports Twisted, which only a daphne start
    # needs (jarvis_site/asgi.py calls this; the worker and commands never do).
    from daphne import http_protocol

    if getattr(http_protocol.WebRequest, "_jarvis_bounded", False):
        return
    bounded = request_class(http_protocol.WebRequest, bounds_from_settings())
    bounded._jarvis_bounded = True
    # HTTPFactory.buildProtocol looks the class up by this module-level name
    # for every connection (daphne has no option for it).
    http_protocol.WebRequest = bounded
