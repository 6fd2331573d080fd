"""A body that stops arriving is answered 408 once its deadline passes
(apps.core.bodies), on the clock of the connection it came in on.

Driven through Twisted's own HTTP channel over an in-memory transport, with
Twisted's test clock standing in for the reactor: the deadline is a minute
and more, which a live server would make the test wait for."""

from __future__ import annotations

from twisted.internet.task import Clock
from twisted.internet.testing import StringTransport
from twisted.web import http

from apps.core.bodies import Bounds, body_deadline_seconds, request_class

BOUNDS = Bounds(credentialed_max=10_000_000, anonymous_max=256 * 1024, session_cookie=b"sessionid")
LENGTH = 1000


def _stalled_upload() -> tuple[Clock, http.HTTPChannel, StringTransport]:
    """A POST whose headers promise LENGTH bytes, of which only a few arrive."""
    clock = Clock()
    channel = http.HTTPChannel()
    channel.requestFactory = request_class(http.Request, BOUNDS)
    channel.callLater = clock.callLater  # what Twisted's HTTPFactory sets to its reactor's
    transport = StringTransport()
    channel.makeConnection(transport)
    channel.dataReceived(
        b"POST /accounts/login/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Content-Length: %d\r\n\r\nusername=" % LENGTH
    )
    return clock, channel, transport


def test_a_stalled_body_is_answered_408_and_closed_at_its_deadline():
    clock, _channel, transport = _stalled_upload()
    deadline = body_deadline_seconds(LENGTH, BOUNDS.anonymous_max)

    clock.advance(deadline - 1)
    assert transport.value() == b""  # still within its time: nothing said yet

    clock.advance(2)
    assert transport.value().startswith(b"HTTP/1.1 408 Request Timeout\r\n")
    assert b"request body too slow" in transport.value()
    assert transport.disconnecting


def test_a_body_that_arrives_in_time_is_not_cut_off():
    clock, channel, transport = _stalled_upload()
    # The rest of the body, then past the deadline: nothing refused it.
    channel.dataReceived(b"x" * (LENGTH - len(b"username=")))
    clock.advance(body_deadline_seconds(LENGTH, BOUNDS.anonymous_max) + 1)
    assert b"408" not in transport.value()
    assert not transport.disconnecting
