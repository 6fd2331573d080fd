from django.apps import AppConfig


class WebsearchConfig(AppConfig):
    """Its tool, toggle and card (`registrations`) are added by apps.core's ready()."""

    name = "apps.websearch"
    label = "websearch"
    verbose_name = "Web search"
