"""What the library does when something below it changes: an admin choosing
another embedding model in the instance settings queues the reindex it needs
(and drops the cached reranker, whose choice sits beside it)."""

from __future__ import annotations

from django.db.models.signals import post_save
from django.dispatch import receiver

from apps.instance.models import InstanceSettings
from apps.library.search.rerank import forget_configured_reranker
from apps.library.tasks import enqueue_reindex_if_model_changed


@receiver(post_save, sender=InstanceSettings, dispatch_uid="library-embedding-model")
def _settings_saved(sender, instance, **kwargs) -> None:
    forget_configured_reranker()
    if kwargs.get("raw"):
        return  # a fixture being loaded, not an admin's choice
    enqueue_reindex_if_model_changed()
