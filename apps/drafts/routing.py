from django.urls import path

from apps.drafts import consumers

websocket_urlpatterns = [
    path("ws/drafts/<id:draft_id>/", consumers.DraftConsumer.as_asgi()),
]
