from django.apps import AppConfig


class LibraryConfig(AppConfig):
    name = "apps.library"
    label = "library"

    def ready(self) -> None:
        # Signal receivers import models and tasks, which are not ready when
        # this module is imported: Django's place for them is ready().
        from apps.library import signals  # noqa: F401
