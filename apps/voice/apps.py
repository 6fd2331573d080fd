"""Voice's app config: it adds its parts of the chat page when the apps are loaded."""

from django.apps import AppConfig


class VoiceConfig(AppConfig):
    name = "apps.voice"
    label = "voice"
    verbose_name = "Voice"

    def ready(self) -> None:
        # Chats sits below voice and cannot import it: voice adds its parts of
        # the chat page (head script, Dictate button) once every app is loaded.
        from apps.chats.page_hooks import chat_page_hook_register
        from apps.voice.chat_page import HOOKS

        for hook in HOOKS:
            chat_page_hook_register(hook)
