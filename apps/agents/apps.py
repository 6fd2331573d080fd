from django.apps import AppConfig


class AgentsConfig(AppConfig):
    """Its `signals` and `registrations` (what it adds to accounts' and chats'
    registries) are imported by apps.core's ready()."""

    name = "apps.agents"
    label = "agents"
    verbose_name = "Agents"
