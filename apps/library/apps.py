from django.apps import AppConfig


class LibraryConfig(AppConfig):
    """Its signal receivers (`signals`) are connected by apps.core's ready()."""

    name = "apps.library"
    label = "library"
