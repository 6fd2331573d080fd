from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from apps.agents import services
from apps.agents.models import SSHProfile


@admin.register(SSHProfile)
class SSHProfileAdmin(admin.ModelAdmin):
    """Admins see profiles and share them with groups; everything else is the
    owner's to change (a host edited here would keep a pin it must lose)."""

    list_display = ("name", "owner", "username", "host", "port", "auth", "host_key_fingerprint")
    list_filter = ("auth", "shared_groups")
    search_fields = ("name", "host", "owner__username")
    fields = (
        "name",
        "owner",
        "host",
        "port",
        "username",
        "auth",
        "public_key",
        "host_key_fingerprint",
        "host_key_pinned_at",
        "shared_groups",
    )
    readonly_fields = tuple(f for f in fields if f != "shared_groups")
    filter_horizontal = ("shared_groups",)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # a profile is made by its owner, with their key

    def save_related(self, request: HttpRequest, form, formsets, change: bool) -> None:
        services.profile_share(
            profile=form.instance, groups=form.cleaned_data["shared_groups"], actor=request.user
        )
