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
        fields = ("display_name", "theme")
        help_texts = {"display_name": "Shown in the header and on shared items."}


class AssistantForm(forms.Form):
    """A person's default model (from the models they may use) and answer style."""

    default_model = forms.ModelChoiceField(
        queryset=None,
        required=False,
        label="Default model",
        help_text="Used for new chats; each chat can still pick another.",
    )
    response_style = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 5}),
        required=False,
        max_length=4000,
        label="Response style",
        help_text="How Jarvis writes answers for you. Leave it as it is to follow the default.",
    )

    def __init__(self, *args, user: User, **kwargs) -> None:
        from apps.instance.prompts import response_style_for
        from apps.instance.selectors import instance_settings
        from apps.llm.selectors import models_for

        kwargs.setdefault(
            "initial",
            {"default_model": user.default_model_id, "response_style": response_style_for(user)},
        )
        super().__init__(*args, **kwargs)
        field = self.fields["default_model"]
        field.queryset = models_for(user)
        field.label_from_instance = lambda model: (
            f"{model.name} · {model.connection.name} ({'cloud' if model.is_cloud else 'local'})"
        )
        household = field.queryset.filter(pk=instance_settings().default_model_id).first()
        field.empty_label = (
            f"The household default ({field.label_from_instance(household)})"
            if household
            else "The household default"
        )


class ThemeForm(forms.Form):
    theme = forms.ChoiceField(choices=User.Theme.choices)


class PasswordForm(PasswordChangeForm):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # It sits below the preferences form; focusing it would scroll the page.
        self.fields["old_password"].widget.attrs.pop("autofocus", None)
        self.fields["new_password1"].help_text = _password_help()
