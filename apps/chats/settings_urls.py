"""URLs of Settings → Assistant."""

from django.urls import path

from apps.chats import settings_views

app_name = "assistant"

urlpatterns = [
    path("", settings_views.assistant, name="page"),
    path("revert-style/", settings_views.revert_style, name="revert_style"),
    path("revert-instructions/", settings_views.revert_instructions, name="revert_instructions"),
]
