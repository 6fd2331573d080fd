from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "apps.accounts"
    label = "accounts"

    def ready(self) -> None:
        # Imported here, once the app registry is ready: importing connects the receivers.
        from apps.accounts import signals  # noqa: F401
