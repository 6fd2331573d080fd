from django.urls import path

from apps.chats import consumers

websocket_urlpatterns = [
    path("ws/chats/<id:chat_id>/", consumers.ChatConsumer.as_asgi()),
]
