import os

from django.apps import AppConfig
from django.utils.module_loading import autodiscover_modules


class CoreConfig(AppConfig):
    name = "apps.core"
    label = "core"

    def ready(self) -> None:
        # What sandbox children may run (apps.core.sandbox): every process
        # registers the same names, and the zygote has them loaded.
        autodiscover_modules("sandboxed")
        if os.environ.get("JARVIS_SANDBOX_ZYGOTE") == "1":
            # The zygote is forked for every parse: it loads only what the
            # children need, which keeps each fork cheap.
            return
        # Every process (web, worker, CLI) imports the apps' tasks modules so the
        # job registry is complete: the Jobs page and sync_status list every job,
        # and the web can enqueue tasks the worker knows by the same names.
        autodiscover_modules("tasks")
