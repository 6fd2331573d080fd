from django.contrib import admin
from django.contrib.auth.admin import UserAdmin as BaseUserAdmin

from apps.accounts.models import LoginFailure, User


@admin.register(User)
class UserAdmin(BaseUserAdmin):
    fieldsets = (
        *BaseUserAdmin.fieldsets,
        ("Jarvis", {"fields": ("display_name", "theme")}),
    )
    list_display = ("username", "display_name", "is_active", "is_superuser", "last_login")
    list_filter = ("is_active", "is_superuser", "groups")


@admin.register(LoginFailure)
class LoginFailureAdmin(admin.ModelAdmin):
    """Recent failed sign-ins, newest first: kept for the throttling window
    (pruned daily). Deleting rows lifts a lock, as `manage.py users unlock` does."""

    list_display = ("username", "ip", "at")
    readonly_fields = ("username", "ip", "at")
    search_fields = ("username", "ip")
    ordering = ("-at",)
    date_hierarchy = "at"

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False  # a record of what happened; only deleting it makes sense
