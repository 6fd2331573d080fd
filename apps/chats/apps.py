from django.apps import AppConfig


class ChatsConfig(AppConfig):
    """Its Settings page (`registrations`) is added by apps.core's ready()."""

    name = "apps.chats"
    label = "chats"
