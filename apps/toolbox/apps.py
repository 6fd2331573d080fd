from django.apps import AppConfig


class ToolboxConfig(AppConfig):
    name = "apps.toolbox"
    label = "toolbox"
    verbose_name = "Outside tools"
