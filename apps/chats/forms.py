"""Forms for a person's assistant preferences."""

from __future__ import annotations

from django import forms

from apps.accounts.models import User
from apps.accounts.response_style import response_style_for
from apps.instance.selectors import instance_settings
from apps.llm.selectors import models_for


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
    instructions = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 4}),
        required=False,
        max_length=4000,
        label="Your instructions",
        help_text="Added to every chat of yours, after the household's prompt and before a "
        "chat's own instructions. E.g. “I am a nurse: medical terms are fine.”",
    )

    def __init__(self, *args, user: User, **kwargs) -> None:

        kwargs.setdefault(
            "initial",
            {
                "default_model": user.default_model_id,
                "response_style": response_style_for(user),
                "instructions": user.instructions,
            },
        )
        super().__init__(*args, **kwargs)
        field = self.fields["default_model"]
        field.queryset = models_for(user=user)
        field.label_from_instance = lambda model: (
            f"{model.name} · {model.connection.name} ({'cloud' if model.is_cloud else 'local'})"
        )
        household = field.queryset.filter(pk=instance_settings().default_model_id).first()
        field.empty_label = (
            f"The household default ({field.label_from_instance(household)})"
            if household
            else "The household default"
        )
