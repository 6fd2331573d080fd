from __future__ import annotations

from django.db import models


class InstanceSettings(models.Model):
    """Instance-wide switches admins edit in Django admin. Exactly one row (pk=1)."""

    site_name = models.CharField(max_length=60, default="Jarvis")
    signup_enabled = models.BooleanField(
        default=False,
        help_text="Let people create their own account from the sign-in page. "
        "New accounts join the household group.",
    )

    class Meta:
        verbose_name = "instance settings"
        verbose_name_plural = "instance settings"

    def __str__(self) -> str:
        return "Instance settings"

    def save(self, *args, **kwargs) -> None:
        self.pk = 1
        super().save(*args, **kwargs)
