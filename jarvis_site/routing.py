"""Every websocket route, gathered from the apps."""

from apps.agents.routing import websocket_urlpatterns as agent_routes
from apps.chats.routing import websocket_urlpatterns as chat_routes
from apps.core.routing import websocket_urlpatterns as core_routes
from apps.drafts.routing import websocket_urlpatterns as draft_routes

websocket_urlpatterns = [*core_routes, *chat_routes, *draft_routes, *agent_routes]
