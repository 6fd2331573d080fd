from django.apps import AppConfig


class SupportConfig(AppConfig):
    name = "tests.support"
    label = "test_support"
