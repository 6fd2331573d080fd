from django.apps import AppConfig
from django.utils.module_loading import autodiscover_modules


class CoreConfig(AppConfig):
    name = "apps.core"
    label = "core"

    def ready(self) -> None:
        # Every process (web, worker, CLI) imports the apps' tasks modules so the
        # job registry is complete: the Jobs page and sync_status list every job,
        # and the web can enqueue tasks the worker knows by the same names.
        autodiscover_modules("tasks")
