from __future__ import annotations

from apps.instance.models import InstanceSettings


def instance_settings() -> InstanceSettings:
    """The one settings row, created with defaults the first time it is asked for."""
    settings, _ = InstanceSettings.objects.get_or_create(pk=1)
    return settings
