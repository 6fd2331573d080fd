import os

from django.apps import AppConfig
from django.db.models.signals import post_migrate
from django.urls import register_converter
from django.utils.module_loading import autodiscover_modules

from apps.core.filemodes import data_modes_fix
from apps.core.ids import IdConverter


class CoreConfig(AppConfig):
    name = "apps.core"
    label = "core"

    def ready(self) -> None:
        # `<id:pk>` in every app's URLs and websocket routes (apps.core.ids); here,
        # because ready() runs before any URLconf or routing module is imported.
        register_converter(IdConverter, "id")
        if os.environ.get("JARVIS_SANDBOX_ZYGOTE") == "1":
            # The zygote is forked for every parse: it loads only what the
            # children need, which keeps each fork cheap (they never open the
            # database, so no signal receivers; no chat, so no registrations).
            return
        # Every process (web, worker, CLI) imports the apps' tasks modules so the
        # job registry is complete: the Jobs page and sync_status list every job,
        # and the web can enqueue tasks the worker knows by the same names.
        autodiscover_modules("tasks")
        # The one place the apps plug into the floors below them, which cannot
        # import them (docs/architecture.md, "Floors"): importing an app's
        # `signals` connects its receivers, importing its `registrations` fills
        # the lower floors' registries (chat tools, page hooks, Settings pages…).
        # Here, in core's ready(): Django calls ready() only once every app's
        # models are imported, and a module is imported once per process, so
        # each receiver is connected and each entry registered exactly once.
        # Apps are visited in INSTALLED_APPS order (each app's `signals`, then
        # its `registrations`), lower floors first; a registry's own entries
        # come with it (importing apps.chats.tools registers the chats' tools
        # before any app above can add one).
        autodiscover_modules("signals", "registrations")
        # An install from before umask 077 had a world-readable database and
        # uploads; every `migrate` (make run, install.sh, update.sh) fixes that.
        post_migrate.connect(_fix_data_modes, sender=self, dispatch_uid="core-data-modes")


def _fix_data_modes(sender, using: str = "default", **kwargs) -> None:
    if using == "default":
        data_modes_fix()
