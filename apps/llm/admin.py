"""Django admin for LLM connections and the model catalogue.

The rows are the instance app's, but checking a connection talks to the
endpoint, which only this layer can do; so their admin lives here."""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.forms.models import BaseInlineFormSet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.defaultfilters import pluralize
from django.template.response import TemplateResponse
from django.urls import path, reverse

from apps.instance import services as instance_services
from apps.instance.forms import ConnectionForm
from apps.instance.models import Connection, ModelEntry
from apps.instance.selectors import instance_settings
from apps.llm.services import (
    PROBE_FAILED,
    PROBE_WORDS,
    CheckResult,
    connection_check,
    model_tools_from_probe,
)

# A check's message lists at most this many ids (a cloud endpoint serves hundreds).
SHOWN_IDS = 40


class ModelEntryForm(forms.ModelForm):
    """A catalogue entry, with "instance default" as a tick box."""

    instance_default = forms.BooleanField(
        required=False,
        label="instance default",
        help_text="The model a chat starts with when the person has not chosen one.",
    )

    class Meta:
        model = ModelEntry
        fields = (
            "connection",
            "model_id",
            "display_name",
            "supports_tools",
            "supports_vision",
            "search_only",
            "context_length",
            "enabled",
            "groups",
            # Added to the system prompt for this model (instance layer, apps.chats.setup).
            "prompt_note",
        )

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        pk = self.instance.pk
        self.fields["instance_default"].initial = bool(
            pk and pk == instance_settings().default_model_id
        )


def _save_default(form: ModelEntryForm, entry: ModelEntry) -> None:
    if "instance_default" not in form.changed_data:
        return
    if form.cleaned_data["instance_default"]:
        instance_services.default_model_set(model=entry)
    elif instance_settings().default_model_id == entry.pk:
        instance_services.default_model_set(model=None)


class DefaultAwareFormSet(BaseInlineFormSet):
    def save(self, commit: bool = True):
        saved = super().save(commit=commit)
        for form in self.forms:
            if form.instance.pk and form not in self.deleted_forms:
                _save_default(form, form.instance)
        return saved


class ModelEntryInline(admin.TabularInline):
    model = ModelEntry
    form = ModelEntryForm
    formset = DefaultAwareFormSet
    fields = (
        "model_id",
        "display_name",
        "supports_tools",
        "supports_vision",
        "context_length",
        "enabled",
        "instance_default",
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
    count = len(result.models)
    return f"Check of {connection.name}: {count} model{pluralize(count)}: {shown}{tail}"


def _probed_and_defaulted(added: list[ModelEntry], result: CheckResult) -> list[str]:
    """Probe tool support where the endpoint did not state it (one tiny
    request each), and make the first model the instance default when there is
    none, so a chat answers at once. Returns what the admin is told."""
    lines = []
    for entry in added:
        if result.found[entry.model_id].tools is not None:
            continue
        probe = model_tools_from_probe(entry=entry)
        if probe == PROBE_FAILED:
            lines.append(
                f"The tool probe of {entry.model_id} failed; tick tools by hand if it has them."
            )
            continue
        lines.append(f"The model {entry.model_id} {PROBE_WORDS[probe]}")
    settings_row = instance_settings()
    if added and settings_row.default_model is None:
        chosen = next((e for e in added if e.supports_tools), added[0])
        instance_services.default_model_set(model=chosen)
        # Lines start with a word: the admin capitalises a message's first letter,
        # which would misspell a label ("Home:qwen3:8b").
        lines.append(f"The model {chosen.label} is now the instance's default model.")
    return lines


@admin.register(Connection)
class ConnectionAdmin(admin.ModelAdmin):
    form = ConnectionForm
    list_display = ("name", "kind", "base_url", "location", "enabled", "stored_key")
    list_filter = ("kind", "location", "enabled")
    search_fields = ("name", "base_url")
    readonly_fields = ("stored_key", "created", "updated")
    fieldsets = (
        (None, {"fields": ("name", "kind", "base_url", "location", "enabled")}),
        ("Request options", {"fields": ("request_options",)}),
        # apps.voice: dictation and read aloud through this endpoint's audio routes.
        ("Voice", {"fields": ("transcription_model", "speech_model", "speech_voice")}),
        ("API key", {"fields": ("stored_key", "api_key", "clear_api_key")}),
        ("History", {"fields": ("created", "updated"), "classes": ("collapse",)}),
    )
    inlines = (ModelEntryInline,)
    actions = ("check_connections", "add_found_models")
    change_form_template = "admin/llm/connection/change_form.html"

    def get_urls(self):
        check = path(
            "<path:object_id>/check/",
            self.admin_site.admin_view(self.check_view),
            name="llm_connection_check",
        )
        return [check, *super().get_urls()]

    def check_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """Ask the endpoint which models it serves; tick the ones to add (with
        the context length and tool/vision support the endpoint states)."""
        connection = self.get_object(request, object_id)
        if connection is None or not self.has_change_permission(request, connection):
            raise Http404
        result = connection_check(connection=connection)
        if request.method == "POST" and result.ok:
            chosen = [m for m in request.POST.getlist("model") if m in result.found]
            added = instance_services.models_add_found(
                connection=connection,
                model_ids=chosen,
                capabilities={
                    m: (i.context_length, i.tools, i.vision) for m, i in result.found.items()
                },
            )
            self.message_user(
                request,
                f"Added {len(added)} model{pluralize(len(added))} to {connection.name}.",
                messages.SUCCESS,
            )
            for line in _probed_and_defaulted(added, result):
                self.message_user(request, line, messages.INFO)
            return HttpResponseRedirect(
                reverse("admin:instance_connection_change", args=[connection.pk])
            )
        known = set(connection.models.values_list("model_id", flat=True))
        rows = [
            {"info": result.found[model_id], "known": model_id in known}
            for model_id in result.models
        ]
        context = {
            **self.admin_site.each_context(request),
            "title": f"Check {connection.name}",
            "opts": self.model._meta,
            "original": connection,
            "result": result,
            "rows": rows,
        }
        return TemplateResponse(request, "admin/llm/connection/check.html", context)

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
                connection=connection,
                model_ids=result.models,
                capabilities={
                    m: (i.context_length, i.tools, i.vision) for m, i in result.found.items()
                },
            )
            names = ", ".join(entry.model_id for entry in added[:SHOWN_IDS]) or "none new"
            self.message_user(
                request,
                f"Added {len(added)} model{pluralize(len(added))} to {connection.name} ({names}). "
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
        "context_shown",
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
    form = ModelEntryForm

    def save_model(self, request, obj, form, change) -> None:
        super().save_model(request, obj, form, change)
        _save_default(form, obj)

    @admin.display(description="context length", ordering="context_length")
    def context_shown(self, obj: ModelEntry) -> str:
        # 0 is "not known" (the endpoint did not say); chats then use the default.
        return f"{obj.context_length:,}" if obj.context_length else "unknown"

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
