from django.contrib import admin
from django.http import HttpRequest

from apps.instance.models import InstanceSettings


@admin.register(InstanceSettings)
class InstanceSettingsAdmin(admin.ModelAdmin):
    list_display = ("site_name", "signup_enabled")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return not InstanceSettings.objects.exists()

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False
