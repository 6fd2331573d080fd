from django.apps import AppConfig


class AgentsConfig(AppConfig):
    name = "apps.agents"
    label = "agents"
    verbose_name = "Agents"

    def ready(self) -> None:
        # Accounts and chats sit below this app and cannot import it: agents
        # adds its Settings page (only for people allowed agent chats) and its
        # parts of the chat page through their registries.
        from apps.accounts.settings_pages import SettingsPage, settings_page_register
        from apps.agents import signals  # noqa: F401  (connects the terminal's receivers)
        from apps.agents.chat_page import HOOKS
        from apps.agents.selectors import may_use_agents
        from apps.chats.page_hooks import chat_page_hook_register

        settings_page_register(
            SettingsPage("SSH profiles", "ssh_profiles:list", 30, visible=may_use_agents)
        )
        for hook in HOOKS:
            chat_page_hook_register(hook)
