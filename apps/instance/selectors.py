"""The instance settings row, and readers of its fields for schedules."""

from __future__ import annotations

from collections.abc import Callable

from apps.instance.models import InstanceSettings


def instance_settings() -> InstanceSettings:
    """The one settings row, created with defaults the first time it is asked for."""
    settings, _ = InstanceSettings.objects.get_or_create(pk=1)
    return settings


def setting_reader(field: str) -> Callable[[], int]:
    """A callable reading one InstanceSettings field each time it is called
    (for schedules whose interval an admin sets)."""
    return lambda: getattr(instance_settings(), field)
