from django.apps import AppConfig


class DraftsConfig(AppConfig):
    name = "apps.drafts"
    label = "drafts"

    def ready(self) -> None:
        # The chat's tool loop offers the drafts tools; they live with drafts.
        from apps.drafts.tools import register_all

        register_all()
