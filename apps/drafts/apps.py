from django.apps import AppConfig


class DraftsConfig(AppConfig):
    name = "apps.drafts"
    label = "drafts"
