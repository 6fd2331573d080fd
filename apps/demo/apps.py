from django.apps import AppConfig


class DemoConfig(AppConfig):
    """The demo household `make run` seeds: people, vaults, a model-free chat.
    The top floor: it uses every app below it and nothing imports it."""

    name = "apps.demo"
    label = "demo"
