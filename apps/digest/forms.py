from __future__ import annotations

from django import forms
from django.core.exceptions import ValidationError

from apps.digest import config
from apps.digest.models import DigestSettings
from apps.llm.selectors import default_model_for, models_for


class DigestSettingsForm(forms.Form):
    """The settings page. Checking is done by services.configure (shared with
    the command); this form only lays the fields out and maps its errors."""

    enabled = forms.BooleanField(required=False, label="Make my weekly digest", initial=True)
    arxiv = forms.CharField(
        required=False,
        label="arXiv categories",
        widget=forms.Textarea(attrs={"rows": 3, "placeholder": "cs.LG:50\ncs.CL:30"}),
        help_text="One a line: a category and how many of its newest papers of the week "
        f"to consider (1–{config.MAX_LIMIT}), e.g. cs.LG:50.",
    )
    biorxiv = forms.CharField(
        required=False,
        label="bioRxiv categories",
        widget=forms.Textarea(attrs={"rows": 2, "placeholder": "bioinformatics:100"}),
        help_text="One a line, e.g. bioinformatics:100 or cell biology:30.",
    )
    keywords = forms.CharField(
        required=False,
        label="bioRxiv keywords",
        widget=forms.Textarea(attrs={"rows": 2, "placeholder": "cytometry:50"}),
        help_text="Searched in the titles and abstracts of the whole week of bioRxiv, "
        "for topics without a category, e.g. spatial transcriptomics:30.",
    )
    research_context = forms.CharField(
        required=False,
        label="Your research context",
        widget=forms.Textarea(attrs={"rows": 6}),
        help_text="What you work on and what you want to hear about. It goes into the "
        "scoring prompt, so the model knows what “relevant” means for you.",
    )
    model = forms.CharField(
        required=False,
        label="Scoring model",
        widget=forms.Select(),
        help_text="The model that reads the abstracts and scores them.",
    )
    folder = forms.CharField(
        required=False,
        label="Subfolder for digest files",
        max_length=200,
        help_text="Optional. Digest files are kept in your own digest folder on the server; "
        "name a subfolder to keep them in, e.g. weekly.",
    )

    def __init__(self, *args, user, current: DigestSettings | None = None, **kwargs) -> None:
        if current is not None and "initial" not in kwargs:
            kwargs["initial"] = {
                "enabled": current.enabled,
                "arxiv": config.as_text(current.arxiv_categories),
                "biorxiv": config.as_text(current.biorxiv_categories),
                "keywords": config.as_text(current.biorxiv_keywords),
                "research_context": current.research_context,
                "model": current.model_label,
                "folder": current.folder,
            }
        super().__init__(*args, **kwargs)
        self.user = user
        default = default_model_for(user=user)
        choices = [("", f"My default model ({default.label})" if default else "My default model")]
        choices += [(m.label, f"{m.name} ({m.label})") for m in models_for(user=user)]
        saved = (current.model_label if current else "") or ""
        if saved and saved not in {value for value, _ in choices}:
            # Still shown, so the person sees what they had and why it is refused.
            choices.append((saved, f"{saved} (no longer available to you)"))
        self.fields["model"].widget.choices = choices

    def clean(self) -> dict:
        data = super().clean()
        if data.get("enabled") and not any(
            (data.get(name) or "").strip() for name in ("arxiv", "biorxiv", "keywords")
        ):
            raise ValidationError(
                "Add at least one arXiv category, bioRxiv category or keyword, "
                "or untick “Make my weekly digest”."
            )
        return data

    def add_service_errors(self, error: ValidationError) -> None:
        """Errors from services.configure, put under the fields they are about."""
        for name, messages in error.message_dict.items():
            self.add_error(name if name in self.fields else None, messages)
