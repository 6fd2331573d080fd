from __future__ import annotations

from django import forms
from django.contrib.auth.forms import AuthenticationForm, PasswordChangeForm, UserCreationForm
from django.contrib.auth.password_validation import password_validators_help_texts

from apps.accounts.models import User


class LoginForm(AuthenticationForm):
    # One message for a wrong password, an unknown name and a disabled account:
    # the form must not tell a stranger which usernames exist.
    error_messages = {
        "invalid_login": "That username and password do not match an account.",
        "inactive": "That username and password do not match an account.",
    }


def _password_help() -> str:
    # Django's own help is an HTML list; plain text keeps templates free of |safe.
    return " ".join(password_validators_help_texts())


class SignupForm(UserCreationForm):
    display_name = forms.CharField(max_length=80, required=False, label="Display name")

    class Meta(UserCreationForm.Meta):
        model = User
        fields = ("username", "display_name")

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["password1"].help_text = _password_help()

    def clean_username(self) -> str:
        username = self.cleaned_data["username"].strip()
        if User.objects.filter(username__iexact=username).exists():
            raise forms.ValidationError("That username is taken.")
        return username


class PreferencesForm(forms.ModelForm):
    class Meta:
        model = User
        fields = ("display_name", "theme", "send_with_ctrl_enter")
        labels = {"send_with_ctrl_enter": "Send chat messages with Ctrl+Enter"}
        help_texts = {
            "display_name": "Shown in the header and on shared items.",
            "send_with_ctrl_enter": (
                "Off: Enter sends and Shift+Enter starts a new line. "
                "On: Enter starts a new line and Ctrl+Enter sends."
            ),
        }


class ThemeForm(forms.Form):
    theme = forms.ChoiceField(choices=User.Theme.choices)


class PasswordForm(PasswordChangeForm):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # It sits below the preferences form; focusing it would scroll the page.
        self.fields["old_password"].widget.attrs.pop("autofocus", None)
        self.fields["new_password1"].help_text = _password_help()
