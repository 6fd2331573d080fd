from django.apps import AppConfig


class AccountsConfig(AppConfig):
    """Its signal receivers (`signals`) are connected by apps.core's ready()."""

    name = "apps.accounts"
    label = "accounts"
