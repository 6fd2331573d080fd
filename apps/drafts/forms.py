from __future__ import annotations

from django import forms

from apps.core.errors import Refused
from apps.drafts import sandbox


def _filename(value: str) -> str:
    try:
        return sandbox.check_filename(value)
    except Refused as exc:
        raise forms.ValidationError(str(exc)) from None


class NewDraftForm(forms.Form):
    title = forms.CharField(max_length=200, required=False, label="Title")
    filename = forms.CharField(
        max_length=sandbox.NAME_MAX,
        initial="draft.md",
        label="First file",
        help_text="A name with its type: .md, .tex, .bib, .txt or .csv.",
    )

    def clean_filename(self) -> str:
        return _filename(self.cleaned_data["filename"])


class NewFileForm(forms.Form):
    filename = forms.CharField(max_length=sandbox.NAME_MAX, label="New file")

    def clean_filename(self) -> str:
        return _filename(self.cleaned_data["filename"])
