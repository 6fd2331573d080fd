"""Requests answered in one thread hop: the chat's send, regenerate and edit.

Django's ASGI handler runs each sync step of a request on a thread of its
own and comes back to the event loop after every one: every
`process_request` and `process_response` of its own middleware
(`MiddlewareMixin` wraps each in `sync_to_async`), the CSRF check, the
session, the user, then each database step of the view. A chat send made
about twenty such trips, and in a burst of a hundred sends while a hundred
replies stream, each trip waits for the busy event loop to pick its result
up (docs/chat.md, "Streaming under load").

A view marked `@one_hop` is served instead by Django's *sync* middleware chain
and the view itself, all in one call on a small pool of threads of its own
(`POOL`), so the request leaves the event loop once and comes back once. The
session and the user are loaded once, in that thread. What must happen on the
event loop (starting the reply's task, handing a frame to the sockets) the view
asks for with `on_loop(fn)`: it runs there before the response is sent.

The pool is bounded, so a burst of sends holds at most POOL_THREADS database
connections and never waits behind other requests' threads; each thread keeps
its SQLite connection between requests (`close_old_connections` hands it back
to the idle pool in jarvis_site/db/base.py after each request).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from asgiref.sync import async_to_sync, sync_to_async
from django.core.handlers.asgi import ASGIHandler
from django.core.handlers.base import BaseHandler
from django.db import close_old_connections
from django.urls import Resolver404, get_resolver

# Threads serving one-hop requests. Measured with bench/stream_load.py (100
# sends within a second while 100 replies stream, docs/chat.md): send p99 was
# 706-762 ms with 1 thread, 731-828 ms with 2, 928-1101 ms with 4, 1483 ms
# with 8; 2 keeps the p50 of 4 without the tail of more threads fighting
# for the GIL and SQLite's write lock.
POOL_THREADS = 2
POOL = ThreadPoolExecutor(max_workers=POOL_THREADS, thread_name_prefix="jarvis-one-hop")

# The event loop that serves the request, seen from the pool's thread.
_LOOP: contextvars.ContextVar[asyncio.AbstractEventLoop | None] = contextvars.ContextVar(
    "jarvis_one_hop_loop", default=None
)


class _InFlight:
    """One-hop requests waiting for or running on POOL, counted on the loop
    that serves them (so no lock is needed), with an event set while none is."""

    def __init__(self) -> None:
        self.count = 0
        self.idle = asyncio.Event()
        self.idle.set()

    def enter(self) -> None:
        self.count += 1
        self.idle.clear()

    def leave(self) -> None:
        self.count -= 1
        if not self.count:
            self.idle.set()


# One per event loop: an asyncio.Event belongs to the loop it first waits on,
# and the tests run several loops.
_in_flight: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _InFlight] = (
    weakref.WeakKeyDictionary()
)


def _tracker() -> _InFlight:
    loop = asyncio.get_running_loop()
    tracker = _in_flight.get(loop)
    if tracker is None:
        tracker = _in_flight[loop] = _InFlight()
    return tracker


async def after_sends(most: float = 2.0) -> None:
    """Wait until no one-hop request is in flight on this loop, for at most
    `most` seconds. A reply's setup calls it first: in a burst, the person who
    just pressed Send sees their message land before a hundred other replies
    load their turns (SQLite and the GIL serve one at a time), and a reply
    that waits starts at most `most` seconds later than it would have."""
    tracker = _tracker()
    if tracker.count:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(tracker.idle.wait(), most)


def one_hop(view: Callable) -> Callable:
    """Mark a sync view to be served in one hop (put it under the other
    decorators: they copy the mark, as functools.wraps does)."""
    view.one_hop = True
    return view


def on_loop(fn: Callable[[], None]) -> None:
    """Run `fn()` on the event loop serving this request, before its response
    is sent. In a one-hop request it is queued (the loop runs it before it
    picks up the response, which is queued after it); elsewhere (a sync view
    under Django's own handler, the test client) it runs through async_to_sync."""
    loop = _LOOP.get()
    if loop is not None:
        loop.call_soon_threadsafe(fn)
        return

    async def call() -> None:
        fn()

    async_to_sync(call)()


class OneHopHandler(ASGIHandler):
    """Django's ASGI handler, with `@one_hop` views served by the sync chain in
    one call on POOL; every other request as Django serves it."""

    def __init__(self) -> None:
        super().__init__()
        self.sync_chain = BaseHandler()
        self.sync_chain.load_middleware(is_async=False)

    async def get_response_async(self, request):
        if not _marked(request.path_info):
            return await super().get_response_async(request)
        token = _LOOP.set(asyncio.get_running_loop())
        tracker = _tracker()
        tracker.enter()
        try:
            return await sync_to_async(self._whole, thread_sensitive=False, executor=POOL)(request)
        finally:
            tracker.leave()
            _LOOP.reset(token)

    def _whole(self, request):
        try:
            return self.sync_chain.get_response(request)
        finally:
            # Django closes connections on request_finished, in another thread:
            # this thread's goes back to the idle pool here.
            close_old_connections()


def _marked(path: str) -> bool:
    try:
        match = get_resolver().resolve(path)
    except Resolver404:
        return False
    return getattr(match.func, "one_hop", False)
