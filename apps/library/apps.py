from django.apps import AppConfig
from django.db.models.signals import post_save


class LibraryConfig(AppConfig):
    name = "apps.library"
    label = "library"

    def ready(self) -> None:
        # Instance settings sit below this app: when an admin chooses another
        # embedding model there, the library queues the reindex it needs.
        from apps.instance.models import InstanceSettings

        post_save.connect(
            _settings_saved, sender=InstanceSettings, dispatch_uid="library-embedding-model"
        )


def _settings_saved(sender, instance, **kwargs) -> None:
    # Imported late: tasks import the whole library, which is not ready at import time.
    from apps.library.search.rerank import forget_configured_reranker
    from apps.library.tasks import enqueue_reindex_if_model_changed

    forget_configured_reranker()
    if kwargs.get("raw"):
        return
    enqueue_reindex_if_model_changed()
