from django.apps import AppConfig


class WebsearchConfig(AppConfig):
    name = "apps.websearch"
    label = "websearch"
    verbose_name = "Web search"
