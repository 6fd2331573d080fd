"""Forms for SSH profiles and new agent chats.

Secret fields never render a value: a form shown again after an error asks
for the key or password again rather than echoing it into the page.
"""

from __future__ import annotations

from django import forms
from django.core.validators import MaxValueValidator, MinValueValidator

from apps.agents.models import AgentSession, SSHProfile, validate_host, validate_username


class SecretTextarea(forms.Textarea):
    """A textarea that never puts its value back into the HTML."""

    def format_value(self, value) -> None:
        return None


class ProfileForm(forms.Form):
    """Add a profile, or change one (then "keep" leaves its secret as it is)."""

    KEEP, PASTE, GENERATE, PASSWORD = "keep", "key", "generate", "password"

    name = forms.CharField(max_length=80, help_text="What you call this machine, e.g. “laptop”.")
    host = forms.CharField(max_length=253, validators=[validate_host])
    port = forms.IntegerField(
        initial=22, validators=[MinValueValidator(1), MaxValueValidator(65535)]
    )
    username = forms.CharField(
        max_length=64,
        validators=[validate_username],
        label="User on the remote machine",
    )
    auth = forms.ChoiceField(
        label="Log in with",
        widget=forms.RadioSelect,
        choices=[
            (
                GENERATE,
                "A new key Jarvis generates (ed25519): you add its public key to the server",
            ),
            (PASTE, "A private key I paste (OpenSSH or PEM, without a passphrase)"),
            (PASSWORD, "A password"),
        ],
        initial=GENERATE,
    )
    private_key = forms.CharField(
        required=False,
        strip=False,
        max_length=64 * 1024,
        label="Private key",
        widget=SecretTextarea(attrs={"rows": 6, "autocomplete": "off", "spellcheck": "false"}),
        help_text="Stored encrypted and never shown again.",
    )
    password = forms.CharField(
        required=False,
        strip=False,
        max_length=1024,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}),
        help_text="Stored encrypted and never shown again.",
    )

    def __init__(self, *args, profile: SSHProfile | None = None, **kwargs) -> None:
        if profile is not None:
            kwargs.setdefault(
                "initial",
                {
                    "name": profile.name,
                    "host": profile.host,
                    "port": profile.port,
                    "username": profile.username,
                    "auth": self.KEEP,
                },
            )
        super().__init__(*args, **kwargs)
        if profile is not None:
            current = "key" if profile.auth == SSHProfile.Auth.KEY else "password"
            self.fields["auth"].choices = [
                (self.KEEP, f"Keep the current {current}"),
                *self.fields["auth"].choices,
            ]

    def clean(self) -> dict:
        data = super().clean()
        auth = data.get("auth")
        if auth == self.PASTE and not (data.get("private_key") or "").strip():
            self.add_error("private_key", "Paste the private key, or choose another way to log in.")
        if auth == self.PASSWORD and not data.get("password"):
            self.add_error("password", "Enter the password, or choose another way to log in.")
        return data

    def secrets(self) -> dict:
        """The keyword arguments for profile_create/profile_update's secret."""
        auth = self.cleaned_data["auth"]
        return {
            "key_text": self.cleaned_data["private_key"] if auth == self.PASTE else None,
            "generate_key": auth == self.GENERATE,
            "password": self.cleaned_data["password"] if auth == self.PASSWORD else None,
        }


class AgentChatForm(forms.Form):
    """A new agent chat: which machine, where on it, and how much to approve."""

    profile = forms.ModelChoiceField(queryset=None, label="Machine (SSH profile)")
    project_dir = forms.CharField(
        max_length=1024,
        label="Project directory",
        help_text="An absolute path on that machine. The agent's commands and the terminal "
        "start there.",
    )
    mode = forms.ChoiceField(
        choices=AgentSession.Mode.choices,
        initial=AgentSession.Mode.ASK,
        label="Approval mode",
        widget=forms.RadioSelect,
    )

    model = forms.ChoiceField(
        required=False,
        label="Model",
        help_text="Which language model plans and runs the work; you can change it later.",
    )

    def __init__(self, *args, profiles, models=(), default_label: str = "", **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["profile"].queryset = profiles
        self.fields["profile"].label_from_instance = lambda p: (
            f"{p.name} ({p.username}@{p.host}:{p.port})"
        )
        only = list(profiles[:2])
        if len(only) == 1:
            # One machine to choose from: it is the choice.
            self.fields["profile"].initial = only[0].pk
            self.fields["profile"].empty_label = None
        default = f"Default ({default_label})" if default_label else "Default"
        self.fields["model"].choices = [
            ("", default),
            *(
                (m.label, (m.display_name or m.label) + (" · cloud" if m.is_cloud else ""))
                for m in models
            ),
        ]


class ModeForm(forms.Form):
    mode = forms.ChoiceField(choices=AgentSession.Mode.choices)
