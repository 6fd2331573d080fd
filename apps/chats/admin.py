"""Django admin for the chats' instance-wide settings: the starting points
every person's new-chat screen offers beside their own (apps.chats.starting_points).

Chats and folders themselves are not here: they are their owners' alone, and
admins configure the instance, they do not read people's conversations."""

from __future__ import annotations

from django.contrib import admin

from apps.chats.models import StartingPoint


@admin.register(StartingPoint)
class StartingPointAdmin(admin.ModelAdmin):
    list_display = ("text", "order", "enabled")
    list_editable = ("order", "enabled")
    list_filter = ("enabled",)
    search_fields = ("text",)
    ordering = ("order", "id")
