"""Voice's app config: its parts of the chat page (`registrations`) are added
by apps.core's ready()."""

from django.apps import AppConfig


class VoiceConfig(AppConfig):
    name = "apps.voice"
    label = "voice"
    verbose_name = "Voice"
