"""Admin for web search providers: the key is entered here, stored encrypted,
shown only masked and never rendered back into the form."""

from __future__ import annotations

from django import forms
from django.contrib import admin

from apps.websearch.models import SearchProvider


class SearchProviderForm(forms.ModelForm):
    api_key = forms.CharField(
        label="API key",
        required=False,
        strip=True,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}),
        help_text="Brave Search: your subscription token. Leave blank to keep the stored key. "
        "SearXNG needs none.",
    )
    clear_api_key = forms.BooleanField(label="Clear the stored key", required=False)
    location = forms.ChoiceField(
        choices=[
            ("", "From the kind (SearXNG: local; Brave: cloud)"),
            *SearchProvider.Location.choices,
        ],
        required=False,
        help_text="Either way the query leaves the house (SearXNG passes it on to the engines "
        "it asks); a private chat shows every query before it is sent.",
    )

    class Meta:
        model = SearchProvider
        fields = (
            "name",
            "kind",
            "base_url",
            "location",
            "enabled",
            "timeout_seconds",
            "max_results",
            "pages_to_read",
            "max_page_kb",
        )

    def clean(self) -> dict:
        data = super().clean()
        kind = data.get("kind")
        if kind == SearchProvider.Kind.SEARXNG and not (data.get("base_url") or "").strip():
            self.add_error("base_url", "Enter your SearXNG instance's address.")
        if data.get("clear_api_key") and data.get("api_key"):
            raise forms.ValidationError("Either enter a new key or clear the stored one, not both.")
        has_key = bool(data.get("api_key")) or (
            bool(self.instance.api_key_encrypted) and not data.get("clear_api_key")
        )
        if kind == SearchProvider.Kind.BRAVE and not has_key:
            self.add_error("api_key", "Brave Search needs an API key.")
        return data

    def save(self, commit: bool = True) -> SearchProvider:
        provider = super().save(commit=False)
        if self.cleaned_data.get("clear_api_key"):
            provider.set_api_key("")
        elif self.cleaned_data.get("api_key"):
            provider.set_api_key(self.cleaned_data["api_key"])
        if commit:
            provider.save()
        return provider


@admin.register(SearchProvider)
class SearchProviderAdmin(admin.ModelAdmin):
    form = SearchProviderForm
    list_display = ("name", "kind", "url", "location", "enabled", "masked_key")
    readonly_fields = ("masked_key",)

    @admin.display(description="Stored key")
    def masked_key(self, provider: SearchProvider) -> str:
        return provider.masked_key or "—"
