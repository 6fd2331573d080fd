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
    list_display = ("username", "ip", "at")
    readonly_fields = ("username", "ip", "at")
    search_fields = ("username", "ip")
