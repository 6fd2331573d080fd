"""ASGI entry point: daphne serves HTTP and websockets from one process."""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "jarvis_site.settings")

import django

# Initialise Django (apps, settings) before importing consumers and their models.
django.setup(set_prefix=False)

from apps.core.onehop import OneHopHandler  # noqa: E402

# Django's ASGI handler, with the chat's send endpoints served in one thread
# hop (apps.core.onehop).
django_asgi_app = OneHopHandler()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from apps.chats.owner import interrupted_sweep, orphan_watch  # noqa: E402
from apps.core import bodies  # noqa: E402
from apps.core.bridge import serve as layer_bridge  # noqa: E402
from apps.core.origins import SameOriginValidator  # noqa: E402
from apps.core.startup import at_start  # noqa: E402
from apps.mcp.http import with_mcp  # noqa: E402
from jarvis_site.routing import websocket_urlpatterns  # noqa: E402

# Every daphne start imports this module before it listens: bound request
# bodies at the server, before Django (apps.core.bodies).
bodies.install()

router = ProtocolTypeRouter(
    {
        # /mcp/ is the MCP endpoint (bearer tokens, Host/Origin checked: apps.mcp.http);
        # everything else is Django.
        # Large bodies are read to the app in pieces (apps.core.bodies).
        "http": bodies.streamed(with_mcp(django_asgi_app)),
        # The validator refuses a missing or foreign Origin (scheme, host and
        # port) before any consumer runs; the auth stack gives consumers
        # scope["user"] and scope["session"].
        "websocket": SameOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)

# Once, before this process's first request or socket: replies a previous
# process left half-written are marked interrupted (not on every page render);
# with several processes sharing a layer, again whenever their lease runs out.
# For its life: the worker's notices and draft events reach this process's
# sockets through the bridge (apps.core.bridge; the in-memory layer only).
application = at_start(router, [interrupted_sweep], background=[orphan_watch, layer_bridge])
