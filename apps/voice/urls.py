"""Voice's URLs: /voice/transcribe/ and /voice/speak/<message id>/."""

from django.urls import path

from apps.voice import views

app_name = "voice"

urlpatterns = [
    path("transcribe/", views.transcribe, name="transcribe"),
    path("speak/<id:message_id>/", views.speak, name="speak"),
]
