"""Voice's app config: it adds its parts of the chat page when the apps are loaded."""

from django.apps import AppConfig


class VoiceConfig(AppConfig):
    name = "apps.voice"
    label = "voice"
    verbose_name = "Voice"

    def ready(self) -> None:
        # Chats sits below voice and cannot import it, and the hooks import
        # models (not loaded yet when this module is): voice adds its parts of
        # the chat page (head script, Dictate button) once every app is loaded.
        from apps.voice.registrations import register_all

        register_all()
