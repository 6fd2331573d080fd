from __future__ import annotations

from django import forms
from django.contrib.auth.models import Group

from apps.accounts.models import User
from apps.core.fields import ModelIdsField
from apps.instance.models import validate_ocr_languages
from apps.library.ingest.parsing.ocr import installed_languages, split_languages
from apps.library.models import Source


def _split_dirs(value: str) -> list[str]:
    return [part.strip() for part in value.replace("\n", ",").split(",") if part.strip()]


class CollectionForm(forms.Form):
    sharing = forms.ChoiceField(choices=Source.Sharing.choices)
    groups = ModelIdsField(
        queryset=Group.objects.order_by("name"), required=False, widget=forms.CheckboxSelectMultiple
    )
    cloud = forms.ChoiceField(choices=Source.Cloud.choices, label="Cloud models")
    private_dirs = forms.CharField(
        required=False,
        label="Private folders",
        help_text=(
            "Comma-separated, relative to the folder. Owner-only and never sent to a cloud model."
        ),
    )
    unversioned_dirs = forms.CharField(
        required=False,
        label="Folders without versions",
        help_text="Diaries and logs: every file there is its own document, never an old version.",
    )
    project_dirs = forms.CharField(
        required=False,
        label="Projects folders",
        help_text="Each note there is a project in your project registry "
        "(so is any note whose frontmatter says type: project).",
    )
    ocr_languages = forms.CharField(
        required=False,
        max_length=100,
        label="Languages of scanned text",
        validators=[validate_ocr_languages],
        help_text="For reading scans and photos (OCR), e.g. eng+deu. Empty: the instance's "
        "setting. Applies to files read from now on (“Read everything again” for the others).",
    )
    describe_images = forms.ChoiceField(
        choices=Source.Describe.choices,
        required=False,
        label="Figures and photos",
        help_text="A vision model describes them so they are found by what they show. "
        "Local-only collections use only a local model.",
    )

    def __init__(self, *args, source: Source, **kwargs) -> None:
        initial = {
            "sharing": source.sharing,
            "groups": list(source.shared_groups.all()),
            "cloud": source.cloud,
            "private_dirs": ", ".join(source.private_dirs),
            "unversioned_dirs": ", ".join(source.unversioned_dirs),
            "project_dirs": ", ".join(source.project_dirs),
            "ocr_languages": source.ocr_languages,
            "describe_images": source.describe_images,
        }
        super().__init__(*args, initial=initial, **kwargs)
        self.source = source
        if not source.is_folder:
            del self.fields["private_dirs"]
            del self.fields["unversioned_dirs"]
            del self.fields["project_dirs"]

    def clean_ocr_languages(self) -> str:
        value = self.cleaned_data.get("ocr_languages", "").strip()
        missing = [code for code in split_languages(value) if code not in installed_languages()]
        if missing:
            raise forms.ValidationError(
                f"OCR language data not installed on the server: {', '.join(missing)}"
            )
        return value

    def clean(self) -> dict:
        data = super().clean()
        for name in ("private_dirs", "unversioned_dirs", "project_dirs"):
            if name in data:
                data[name] = _split_dirs(data[name])
        return data


class RegisterFolderForm(forms.Form):
    owner = forms.ModelChoiceField(queryset=User.objects.none(), required=False)
    name = forms.CharField(max_length=100)
    path = forms.CharField(
        max_length=1000, help_text="A folder under the notes folders' root (JARVIS_VAULTS_ROOT)."
    )
    kind = forms.ChoiceField(
        choices=[(Source.Kind.VAULT, "Vault folder"), (Source.Kind.INBOX, "PDF inbox")]
    )
    sharing = forms.ChoiceField(
        choices=[
            (Source.Sharing.OWNER, "Only the owner"),
            (Source.Sharing.HOUSEHOLD, "The household"),
        ]
    )
    cloud = forms.ChoiceField(choices=Source.Cloud.choices, initial=Source.Cloud.LOCAL_ONLY)

    def __init__(self, *args, user, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if user.is_staff:
            self.fields["owner"].queryset = User.objects.filter(is_active=True).order_by("username")
            self.fields["owner"].initial = user.pk
        else:
            del self.fields["owner"]  # people register folders for themselves

    def clean(self) -> dict:
        data = super().clean()
        data.setdefault("owner", None)
        return data


class UrlForm(forms.Form):
    url = forms.CharField(max_length=2000, label="Web page or arXiv paper")
    refresh = forms.BooleanField(required=False)
    replace = forms.BooleanField(required=False)
