from django.apps import AppConfig


class DigestConfig(AppConfig):
    name = "apps.digest"
    label = "digest"
