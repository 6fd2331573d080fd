from django.urls import path

from apps.agents import consumers

websocket_urlpatterns = [
    path("ws/terminal/<id:chat_id>/", consumers.TerminalConsumer.as_asgi()),
]
