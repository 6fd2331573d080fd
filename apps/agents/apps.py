from django.apps import AppConfig


class AgentsConfig(AppConfig):
    name = "apps.agents"
    label = "agents"
    verbose_name = "Agents"

    def ready(self) -> None:
        # The floors below (accounts, chats) cannot import agents: it fills
        # their registries once every app is loaded.
        from apps.agents.registrations import register_all

        register_all()
