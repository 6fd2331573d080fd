from django.apps import AppConfig


class AgentsConfig(AppConfig):
    name = "apps.agents"
    label = "agents"
    verbose_name = "Agents"

    def ready(self) -> None:
        # Accounts owns the Settings menu but sits below this app: add our
        # page to it, shown only to people allowed agent chats.
        from apps.accounts.settings_pages import SettingsPage, settings_page_register
        from apps.agents.selectors import may_use_agents

        settings_page_register(
            SettingsPage("SSH profiles", "ssh_profiles:list", 30, visible=may_use_agents)
        )
