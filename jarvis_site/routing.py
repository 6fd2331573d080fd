"""Every websocket route, gathered from the apps."""

from django.urls import re_path

from apps.agents.routing import websocket_urlpatterns as agent_routes
from apps.chats.routing import websocket_urlpatterns as chat_routes
from apps.core.consumers import NotFoundConsumer
from apps.core.routing import websocket_urlpatterns as core_routes
from apps.drafts.routing import websocket_urlpatterns as draft_routes

websocket_urlpatterns = [
    *core_routes,
    *chat_routes,
    *draft_routes,
    *agent_routes,
    # Last: any other path is refused like a missing object. Without it the
    # router raised "No route found", which daphne answered with a 500 and a traceback.
    re_path(r"", NotFoundConsumer.as_asgi()),
]
