from django.contrib import admin
from django.contrib.auth.admin import GroupAdmin as BaseGroupAdmin
from django.contrib.auth.admin import UserAdmin as BaseUserAdmin
from django.contrib.auth.models import Group

from apps.accounts import permissions
from apps.accounts.forms import GroupForm, flag_field_name
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


admin.site.unregister(Group)


@admin.register(Group)
class GroupAdmin(BaseGroupAdmin):
    """Groups by what they let members do: the Jarvis flags as checkboxes with
    a sentence each, instead of Django's raw list of every model permission
    (still there, folded, for experts)."""

    form = GroupForm
    fieldsets = (
        (None, {"fields": ("name",)}),
        (
            "What members of this group may do",
            {"fields": tuple(flag_field_name(flag) for flag in permissions.ALL_FLAGS)},
        ),
        (
            "Other Django permissions (experts)",
            {"classes": ("collapse",), "fields": ("permissions",)},
        ),
    )
    list_display = ("name", "jarvis_flags")

    @admin.display(description="Jarvis permissions")
    def jarvis_flags(self, group: Group) -> str:
        held = set(
            group.permissions.filter(content_type__app_label="accounts").values_list(
                "codename", flat=True
            )
        )
        names = [
            permissions.FLAG_TEXT[flag][0]
            for flag in permissions.ALL_FLAGS
            if permissions.codename(flag) in held
        ]
        return ", ".join(names) or "none"
