"""Django admin for LLM connections and the model catalogue.

The rows are the instance app's, but checking a connection talks to the
endpoint, which only this layer can do; so their admin lives here."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from apps.instance import services as instance_services
from apps.instance.forms import ConnectionForm
from apps.instance.models import Connection, ModelEntry
from apps.instance.selectors import instance_settings
from apps.llm.services import CheckResult, connection_check

# A check's message lists at most this many ids (a cloud endpoint serves hundreds).
SHOWN_IDS = 40


class ModelEntryInline(admin.TabularInline):
    model = ModelEntry
    fields = (
        "model_id",
        "display_name",
        "supports_tools",
        "supports_vision",
        "context_length",
        "enabled",
    )
    extra = 0
    show_change_link = True  # groups are edited on the model's own page


def _check_message(connection: Connection, result: CheckResult) -> str:
    if not result.ok:
        return f"Check of {connection.name} failed: {result.error}"
    if not result.models:
        return f"Check of {connection.name}: the endpoint answered but lists no models."
    shown = ", ".join(result.models[:SHOWN_IDS])
    more = len(result.models) - SHOWN_IDS
    tail = f" and {more} more" if more > 0 else ""
    return f"Check of {connection.name}: {len(result.models)} models: {shown}{tail}"


@admin.register(Connection)
class ConnectionAdmin(admin.ModelAdmin):
    form = ConnectionForm
    list_display = ("name", "kind", "base_url", "location", "enabled", "stored_key")
    list_filter = ("kind", "location", "enabled")
    search_fields = ("name", "base_url")
    readonly_fields = ("stored_key", "created", "updated")
    fieldsets = (
        (None, {"fields": ("name", "kind", "base_url", "location", "enabled")}),
        ("API key", {"fields": ("stored_key", "api_key", "clear_api_key")}),
        ("History", {"fields": ("created", "updated"), "classes": ("collapse",)}),
    )
    inlines = (ModelEntryInline,)
    actions = ("check_connections", "add_found_models")

    @admin.display(description="stored key")
    def stored_key(self, obj: Connection) -> str:
        return obj.masked_key or "—"

    @admin.action(description="Check: list the endpoint's models")
    def check_connections(self, request: HttpRequest, queryset: QuerySet[Connection]) -> None:
        for connection in queryset:
            result = connection_check(connection=connection)
            level = messages.SUCCESS if result.ok else messages.ERROR
            self.message_user(request, _check_message(connection, result), level)

    @admin.action(description="Add the models the endpoint lists to the catalogue")
    def add_found_models(self, request: HttpRequest, queryset: QuerySet[Connection]) -> None:
        for connection in queryset:
            result = connection_check(connection=connection)
            if not result.ok:
                self.message_user(request, _check_message(connection, result), messages.ERROR)
                continue
            added = instance_services.models_add_found(
                connection=connection, model_ids=result.models
            )
            names = ", ".join(entry.model_id for entry in added[:SHOWN_IDS]) or "none new"
            self.message_user(
                request,
                f"Added {len(added)} models to {connection.name} ({names}). "
                "Tick tools/vision for those that support them.",
                messages.SUCCESS,
            )


@admin.register(ModelEntry)
class ModelEntryAdmin(admin.ModelAdmin):
    list_display = (
        "label",
        "display_name",
        "supports_tools",
        "supports_vision",
        "context_length",
        "enabled",
        "is_cloud",
        "is_default",
    )
    list_filter = ("connection", "enabled", "supports_tools", "connection__location")
    list_editable = ("enabled",)
    list_select_related = ("connection",)
    search_fields = ("model_id", "display_name", "connection__name")
    filter_horizontal = ("groups",)
    actions = ("make_default",)

    @admin.display(description="cloud", boolean=True)
    def is_cloud(self, obj: ModelEntry) -> bool:
        return obj.is_cloud

    @admin.display(description="instance default", boolean=True)
    def is_default(self, obj: ModelEntry) -> bool:
        return obj.pk == instance_settings().default_model_id

    @admin.action(description="Make it the instance default")
    def make_default(self, request: HttpRequest, queryset: QuerySet[ModelEntry]) -> None:
        if queryset.count() != 1:
            self.message_user(request, "Select exactly one model.", messages.WARNING)
            return
        model = queryset.get()
        instance_services.default_model_set(model=model)
        self.message_user(request, f"{model.label} is now the instance default.")
