from django.apps import AppConfig


class VoiceConfig(AppConfig):
    name = "apps.voice"
    label = "voice"
    verbose_name = "Voice"
