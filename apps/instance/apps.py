from django.apps import AppConfig


class InstanceConfig(AppConfig):
    name = "apps.instance"
    label = "instance"
