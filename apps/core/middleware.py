"""Request and response middleware: the client's address behind a proxy;
headers every response carries, static files and error pages included;
and static files served (whitenoise) without making every request sync.

All three work in sync and async stacks. Under daphne a sync-only
middleware near the top made Django run the whole rest of the stack through
a thread of the request's own and back (async_to_sync), for every request,
async views (sending a chat message) included.
"""

from __future__ import annotations

from collections.abc import Callable

from asgiref.sync import iscoroutinefunction, markcoroutinefunction, sync_to_async
from django.core.exceptions import DisallowedHost
from django.http import HttpRequest, HttpResponse
from whitenoise.middleware import WhiteNoiseMiddleware

from apps.core.proxy import client_address, is_trusted_proxy

# No inline script anywhere: htmx is configured (base.html meta) not to eval,
# and every behaviour lives in static/js/. connect-src 'self' covers same-origin
# websockets in CSP level 3 browsers; ws:/wss: of our own host are listed for
# older ones by the middleware at request time.
_POLICY = {
    "default-src": "'self'",
    "script-src": "'self'",
    "style-src": "'self'",
    "img-src": "'self' data:",
    "font-src": "'self'",
    "connect-src": "'self'",
    "frame-src": "'self'",
    "frame-ancestors": "'none'",
    "base-uri": "'none'",
    "form-action": "'self'",
    "object-src": "'none'",
}
# Django's admin templates carry a few style attributes; scripts stay strict there too.
_INLINE_STYLES = {"style-src": "'self' 'unsafe-inline'"}
_ADMIN_OVERRIDES = _INLINE_STYLES

# The microphone for this origin only, for dictation (apps/voice): the browser
# still asks the person before any page may record; frames of other origins never may.
PERMISSIONS_POLICY = "camera=(), microphone=(self), geolocation=(), payment=(), usb=()"


def csp_allow_inline_styles(response: HttpResponse) -> HttpResponse:
    """Let this one response's page use inline styles (`style-src 'self'
    'unsafe-inline'`): for a vendored widget that styles itself inline, like
    xterm.js (docs/architecture.md says why that is safe). Nothing else can be
    loosened per view: script-src, connect-src and the rest stay as they are."""
    response.csp_inline_styles = True
    return response


def content_security_policy(request: HttpRequest, *, inline_styles: bool = False) -> str:
    policy = dict(_POLICY)
    if request.path.startswith("/admin/"):
        policy.update(_ADMIN_OVERRIDES)
    if inline_styles:
        policy.update(_INLINE_STYLES)
    try:
        host = request.get_host()
    except DisallowedHost:
        host = None  # the 400 for a bad Host header still gets a policy
    if host:
        policy["connect-src"] = f"'self' ws://{host} wss://{host}"
    return "; ".join(f"{key} {value}" for key, value in policy.items())


class SecurityHeadersMiddleware:
    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        if iscoroutinefunction(get_response):
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if iscoroutinefunction(self):
            return self._acall(request)
        return self.headers(request, self.get_response(request))

    async def _acall(self, request: HttpRequest) -> HttpResponse:
        return self.headers(request, await self.get_response(request))

    @staticmethod
    def headers(request: HttpRequest, response: HttpResponse) -> HttpResponse:
        # A view that serves a sandboxed preview sets its own, stricter policy.
        if "Content-Security-Policy" not in response:
            response["Content-Security-Policy"] = content_security_policy(
                request, inline_styles=getattr(response, "csp_inline_styles", False)
            )
        response.setdefault("Permissions-Policy", PERMISSIONS_POLICY)
        response.setdefault("X-Content-Type-Options", "nosniff")
        # Static files leave through whitenoise before Django's own middleware
        # would add these; views that allow framing set their header explicitly.
        response.setdefault("X-Frame-Options", "DENY")
        response.setdefault("Referrer-Policy", "same-origin")
        return response


class ClientAddressMiddleware:
    """REMOTE_ADDR becomes the client's address (apps.core.proxy); a request
    that did not come through a trusted proxy loses its X-Forwarded-* headers,
    so nothing later (Django's HTTPS detection included) can be told otherwise."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        if iscoroutinefunction(get_response):
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> HttpResponse:
        self.rewrite(request)
        # In an async stack get_response returns the awaitable the server awaits.
        return self.get_response(request)

    @staticmethod
    def rewrite(request: HttpRequest) -> None:
        meta = request.META
        peer = meta.get("REMOTE_ADDR") or None
        if is_trusted_proxy(peer):
            address = client_address(peer=peer, forwarded_for=meta.get("HTTP_X_FORWARDED_FOR"))
            if address:
                meta["REMOTE_ADDR"] = address
        else:
            for name in [key for key in meta if key.startswith("HTTP_X_FORWARDED_")]:
                del meta[name]


class StaticFilesMiddleware(WhiteNoiseMiddleware):
    """Whitenoise, in a sync or an async stack: a static file is served from a
    thread (opening it is blocking I/O), anything else goes on as it came."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response=None, **kwargs) -> None:
        super().__init__(get_response, **kwargs)
        if iscoroutinefunction(get_response):
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest):
        if iscoroutinefunction(self):
            return self._acall(request)
        return super().__call__(request)

    async def _acall(self, request: HttpRequest) -> HttpResponse:
        if self.autorefresh or request.path_info in self.files:
            response = await sync_to_async(self._static, thread_sensitive=False)(request)
            if response is not None:
                return response
        return await self.get_response(request)

    def _static(self, request: HttpRequest) -> HttpResponse | None:
        if self.autorefresh:
            static_file = self.find_file(request.path_info)
        else:
            static_file = self.files.get(request.path_info)
        return self.serve(static_file, request) if static_file is not None else None
