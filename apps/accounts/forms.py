from __future__ import annotations

from django import forms
from django.contrib.auth.forms import AuthenticationForm, PasswordChangeForm, UserCreationForm
from django.contrib.auth.models import Group
from django.contrib.auth.password_validation import password_validators_help_texts

from apps.accounts import permissions
from apps.accounts.models import User
from apps.accounts.services import flag_permissions, group_set_flags


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


def flag_field_name(flag: str) -> str:
    return f"flag_{permissions.codename(flag)}"


def _flag_field(flag: str) -> forms.BooleanField:
    label, sentence = permissions.FLAG_TEXT[flag]
    return forms.BooleanField(label=label, help_text=sentence, required=False)


class GroupForm(forms.ModelForm):
    """A group as an admin decides on it: its name, the Jarvis flags as
    checkboxes with a sentence each, and (folded away, for experts) Django's
    other permissions. Saving sets exactly the ticked flags."""

    class Meta:
        model = Group
        fields = ("name", "permissions")
        labels = {"permissions": "Other Django permissions"}
        help_texts = {
            "permissions": (
                "For experts: rights inside this admin (e.g. to edit documents here). "
                "Members of the household need none of them."
            )
        }

    # Declared one by one (not added in __init__) so the admin's fieldsets can
    # name them; the names are flag_field_name() of each flag.
    flag_use_cloud_models = _flag_field(permissions.USE_CLOUD_MODELS)
    flag_use_agent_chats = _flag_field(permissions.USE_AGENT_CHATS)
    flag_manage_folder_sources = _flag_field(permissions.MANAGE_FOLDER_SOURCES)
    flag_run_paper_digest = _flag_field(permissions.RUN_PAPER_DIGEST)
    flag_use_web_search = _flag_field(permissions.USE_WEB_SEARCH)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        held = set()
        if self.instance.pk:
            held = set(
                self.instance.permissions.filter(content_type__app_label="accounts").values_list(
                    "codename", flat=True
                )
            )
        for flag in permissions.ALL_FLAGS:
            self.fields[flag_field_name(flag)].initial = permissions.codename(flag) in held
        if "permissions" in self.fields:
            # The flags are the checkboxes above; the expert list holds the rest.
            flag_ids = [row.pk for row in flag_permissions()]
            self.fields["permissions"].queryset = self.fields["permissions"].queryset.exclude(
                pk__in=flag_ids
            )
            self.fields["permissions"].required = False

    def ticked_flags(self) -> set[str]:
        return {
            flag for flag in permissions.ALL_FLAGS if self.cleaned_data.get(flag_field_name(flag))
        }

    def _save_m2m(self) -> None:
        # The expert list is saved first (it replaces the group's permissions
        # with the non-flag ones chosen), then the flags are set on top of it.
        super()._save_m2m()
        group_set_flags(group=self.instance, flags=self.ticked_flags())
