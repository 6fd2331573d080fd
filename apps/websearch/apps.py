from django.apps import AppConfig


class WebsearchConfig(AppConfig):
    name = "apps.websearch"
    label = "websearch"
    verbose_name = "Web search"

    def ready(self) -> None:
        # Chats cannot import this app; it registers its tool, toggle and card itself.
        from apps.websearch.registrations import register_all

        register_all()
