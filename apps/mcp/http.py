"""The MCP endpoint over Streamable HTTP, at /mcp/ on the same daphne as the site.

jarvis_site/asgi.py sends /mcp and /mcp/ here, before Django (a bearer-token
API has no session and no CSRF token; Django's middleware has nothing to do).
In order, each request must:

1. name a Host in ALLOWED_HOSTS, and carry no Origin, or this site's own (or
   one of JARVIS_ALLOWED_ORIGINS), the same rule as the site's websockets
   (apps.core.origins): the MCP spec's defence against DNS rebinding (a web
   page in the person's browser must not reach a server on their network);
2. carry `Authorization: Bearer <token>` for an active token of an active
   person (apps.mcp.tokens); anything else is a 401, the same for a wrong, a
   revoked or another person's disabled token.

Then the SDK's session manager answers it, statelessly (each request stands
alone, JSON responses), as that person (apps.mcp.server.acting_as). Daphne
sends no ASGI lifespan events, so the manager's task group is started on the
first request, in a task of its own that lives as long as the process.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging

from asgiref.sync import sync_to_async
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings

from apps.core.origins import origin_allowed, site_origin
from apps.mcp.server import acting_as, build_server
from apps.mcp.tokens import user_for_token

logger = logging.getLogger(__name__)

PATHS = ("/mcp", "/mcp/")
EXTRA_HEADERS = [(b"x-content-type-options", b"nosniff"), (b"cache-control", b"no-store")]


def _header(scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return value.decode("latin-1")
    return None


def origin_problem(scope) -> tuple[int, str] | None:
    """(status, reason) when Host or Origin fails the DNS-rebinding check: the
    same rule as the site's websockets (apps.core.origins)."""
    if site_origin(scope) is None:
        return 421, "this host name is not served here"
    if _header(scope, b"origin") is None:
        return None  # apps (not browsers) send no Origin
    if not origin_allowed(scope):
        return 403, "requests from web pages of other sites are refused"
    return None


def bearer_token(scope) -> str:
    value = _header(scope, b"authorization") or ""
    scheme, _, token = value.partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


async def _refuse(send, status: int, reason: str, *, challenge: bool = False) -> None:
    body = json.dumps({"error": reason}).encode()
    headers = [(b"content-type", b"application/json"), *EXTRA_HEADERS]
    if challenge:
        headers.append((b"www-authenticate", b'Bearer realm="jarvis"'))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class McpEndpoint:
    def __init__(self) -> None:
        self._manager: StreamableHTTPSessionManager | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock: asyncio.Lock | None = None
        self._task: asyncio.Task | None = None

    async def __call__(self, scope, receive, send) -> None:
        problem = origin_problem(scope)
        if problem is not None:
            await _refuse(send, *problem)
            return
        user = await sync_to_async(user_for_token)(bearer_token(scope))
        if user is None:
            await _refuse(send, 401, "a valid access token is needed", challenge=True)
            return
        manager = await self._running_manager()

        async def send_with_headers(message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *EXTRA_HEADERS]}
            await send(message)

        with acting_as(user.pk):
            await manager.handle_request(scope, receive, send_with_headers)

    async def _running_manager(self) -> StreamableHTTPSessionManager:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:  # a new event loop (a test's): start afresh on it
            self._loop, self._lock, self._manager = loop, asyncio.Lock(), None
        if self._manager is not None:
            return self._manager
        async with self._lock:
            if self._manager is None:
                self._manager = await self._start(loop)
        return self._manager

    async def _start(self, loop) -> StreamableHTTPSessionManager:
        server = build_server()
        # Host and Origin are checked above against ALLOWED_HOSTS; the SDK's
        # own check (which knows only localhost by default) stays off.
        server.streamable_http_app(
            json_response=True,
            stateless_http=True,
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        manager = server.session_manager
        started = asyncio.Event()

        async def run() -> None:
            async with manager.run():
                started.set()
                await asyncio.Event().wait()  # for the life of the process

        # An empty context: the manager must not inherit the first caller's person.
        self._task = loop.create_task(run(), context=contextvars.Context())
        waiter = loop.create_task(started.wait())
        await asyncio.wait({self._task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        if not started.is_set():
            waiter.cancel()
            self._task.result()  # raises why it failed
        return manager


def with_mcp(django_app):
    """The site's HTTP app with /mcp and /mcp/ answered by the MCP endpoint."""
    endpoint = McpEndpoint()

    async def app(scope, receive, send) -> None:
        if scope["type"] == "http" and scope.get("path") in PATHS:
            await endpoint(scope, receive, send)
        else:
            await django_app(scope, receive, send)

    return app
