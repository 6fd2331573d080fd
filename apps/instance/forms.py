"""Admin forms: the API key is write-only, the system prompt stores only a real change."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from django import forms

from apps.instance import prompts
from apps.instance.models import Connection, InstanceSettings

_LOCAL_SUFFIXES = (".local", ".lan", ".home.arpa", ".internal", ".localhost")


def location_for_url(url: str) -> str:
    """Local for an address on this machine or the home network (loopback,
    private ranges, link-local, `.local`/`.lan` names), else cloud. The name is
    not resolved: a public name is cloud whatever it points at (fail closed)."""
    host = (urlsplit(url.strip()).hostname or "").rstrip(".").lower()
    if host == "localhost" or host.endswith(_LOCAL_SUFFIXES):
        return Connection.Location.LOCAL
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return Connection.Location.CLOUD
    if address.is_loopback or address.is_private or address.is_link_local:
        return Connection.Location.LOCAL
    return Connection.Location.CLOUD


# The request options an admin may set per connection, and what each must be.
_NUMBER = (int, float)
REQUEST_OPTIONS = {
    "temperature": _NUMBER,
    "top_p": _NUMBER,
    "top_k": int,
    "min_p": _NUMBER,
    "repeat_penalty": _NUMBER,
    "presence_penalty": _NUMBER,
    "frequency_penalty": _NUMBER,
    "seed": int,
    "tool_choice": str,
}
ANTHROPIC_OPTIONS = ("temperature", "top_p", "top_k")
TOOL_CHOICES = ("auto", "required", "none")


def request_options_problem(options, kind: str) -> str:
    """Why these request options cannot be stored ("" when they can)."""
    if not isinstance(options, dict):
        return 'Write a JSON object, e.g. {"temperature": 0.2}.'
    for key, value in options.items():
        expected = REQUEST_OPTIONS.get(key)
        if expected is None or (kind == Connection.Kind.ANTHROPIC and key not in ANTHROPIC_OPTIONS):
            return f"{key!r} is not an option Jarvis sends to this kind of connection."
        if isinstance(value, bool) or not isinstance(value, expected):
            return f"{key!r} must be a {'number' if expected is _NUMBER else expected.__name__}."
        if key == "tool_choice" and value not in TOOL_CHOICES:
            return f"tool_choice must be one of {', '.join(TOOL_CHOICES)}."
    return ""


class ConnectionForm(forms.ModelForm):
    # The stored key is never rendered back, not even into a password input's
    # value: the page shows only its masked form.
    api_key = forms.CharField(
        label="API key",
        required=False,
        strip=True,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}),
        help_text="Leave blank to keep the stored key. Not needed for most local servers.",
    )
    clear_api_key = forms.BooleanField(
        label="Clear the stored key", required=False, help_text="Remove the stored key."
    )

    # Left to "from the address", the location follows the base URL (a
    # loopback, private-range or .local/.lan address is local); the admin may
    # still choose either.
    location = forms.ChoiceField(
        choices=[
            ("", "From the address (local for this machine or your home network)"),
            *Connection.Location.choices,
        ],
        required=False,
        help_text="Local: a server on this machine or your own network; every note may reach "
        "it. Cloud: a third party's servers; notes marked local-only and private folders "
        "never go there. A public address counts as cloud.",
    )

    class Meta:
        model = Connection
        fields = (
            "name",
            "kind",
            "base_url",
            "location",
            "enabled",
            "request_options",
            "transcription_model",
            "speech_model",
            "speech_voice",
        )

    def clean(self) -> dict:
        data = super().clean()
        problem = request_options_problem(data.get("request_options") or {}, data.get("kind", ""))
        if problem:
            self.add_error("request_options", problem)
        if not data.get("location"):
            data["location"] = location_for_url(data.get("base_url") or "")
        if data.get("clear_api_key") and data.get("api_key"):
            raise forms.ValidationError("Either enter a new key or clear the stored one, not both.")
        return data

    def save(self, commit: bool = True) -> Connection:
        connection = super().save(commit=False)
        if self.cleaned_data.get("clear_api_key"):
            connection.set_api_key("")
        elif self.cleaned_data.get("api_key"):
            connection.set_api_key(self.cleaned_data["api_key"])
        if commit:
            connection.save()
            self.save_m2m()
        return connection


class InstanceSettingsForm(forms.ModelForm):
    revert_system_prompt = forms.BooleanField(
        label="Revert the system prompt to the default",
        required=False,
    )

    class Meta:
        model = InstanceSettings
        fields = (
            "site_name",
            "signup_enabled",
            "default_model",
            "system_prompt",
            "sync_interval_minutes",
            "inbox_interval_minutes",
            "drafts_retention_days",
            "digest_enabled",
            "digest_weekday",
            "digest_hour",
            "embedding_model",
            "embedding_model_dir",
            "reranker",
            "reranker_dir",
            "reranker_connection",
            "reranker_model",
            "reranker_api",
        )
        widgets = {"system_prompt": forms.Textarea(attrs={"rows": 24, "cols": 100})}

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["system_prompt"]
        # Edit starting from the prompt in effect; saving it unchanged stores nothing.
        if not self.initial.get("system_prompt"):
            self.initial["system_prompt"] = prompts.DEFAULT_SYSTEM_PROMPT
        field.help_text = (
            "What the assistant is told before every chat. Saving the built-in text "
            "unchanged (or an empty box) stores nothing, so you keep getting the "
            "built-in prompt as Jarvis improves it. To go back to the built-in prompt, "
            "tick 'Revert' below or empty the box. Privacy rules are enforced in code, "
            "not by this text."
        )
        field.required = False
        self.fields["default_model"].queryset = self.fields[
            "default_model"
        ].queryset.select_related("connection")

    def clean(self) -> dict:
        data = super().clean()
        data["system_prompt"] = prompts.system_prompt_to_store(
            data.get("system_prompt"), revert=bool(data.get("revert_system_prompt"))
        )
        return data
