from django.apps import AppConfig


class ChatsConfig(AppConfig):
    name = "apps.chats"
    label = "chats"

    def ready(self) -> None:
        # Accounts owns the Settings menu but sits below this app: add our page to it.
        from apps.accounts.settings_pages import SettingsPage, settings_page_register

        settings_page_register(SettingsPage("Assistant", "assistant:page", 10))
