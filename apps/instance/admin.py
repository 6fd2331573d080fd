from __future__ import annotations

from django.contrib import admin, messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse

from apps.instance.advice import settings_advice
from apps.instance.forms import InstanceSettingsForm
from apps.instance.models import InstanceSettings
from apps.instance.selectors import instance_settings


@admin.register(InstanceSettings)
class InstanceSettingsAdmin(admin.ModelAdmin):
    form = InstanceSettingsForm
    list_display = ("site_name", "signup_enabled", "default_model")
    fieldsets = (
        (None, {"fields": ("site_name", "signup_enabled")}),
        ("Models", {"fields": ("default_model", "system_prompt", "revert_system_prompt")}),
        (
            "Background work",
            {
                "fields": (
                    "sync_interval_minutes",
                    "inbox_interval_minutes",
                    "drafts_retention_days",
                    "chats_kept",
                )
            },
        ),
        ("Paper digest", {"fields": ("digest_enabled", "digest_weekday", "digest_hour")}),
        (
            "Reading files",
            {"fields": ("ocr_languages", "describe_images", "vision_model")},
        ),
        ("Search: embedding model", {"fields": ("embedding_model", "embedding_model_dir")}),
        (
            "Search: reranker",
            {
                "fields": (
                    "reranker",
                    "reranker_dir",
                    "reranker_connection",
                    "reranker_model",
                    "reranker_api",
                )
            },
        ),
    )

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # the one row exists (changelist_view makes it)

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def changelist_view(self, request: HttpRequest, extra_context=None) -> HttpResponse:
        # A singleton: the list would only ever hold one row.
        row = instance_settings()
        return HttpResponseRedirect(
            reverse("admin:instance_instancesettings_change", args=[row.pk])
        )

    def change_view(self, request: HttpRequest, object_id, form_url="", extra_context=None):
        if request.method == "GET":  # a save redirects back here: said once, on the page itself
            for advice in settings_advice():
                messages.warning(request, advice)
        return super().change_view(request, object_id, form_url, extra_context)
