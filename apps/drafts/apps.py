from django.apps import AppConfig


class DraftsConfig(AppConfig):
    """Its chat tools (`registrations`) are added by apps.core's ready()."""

    name = "apps.drafts"
    label = "drafts"
