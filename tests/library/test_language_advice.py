"""The English default embedding model meets a library written mostly in
another language: `kb doctor` and the instance settings page in admin say so
and name the model to choose. An English library with a few German notes, or
one whose admin already chose the multilingual model, hears nothing.
(Measured why: docs/library.md, "Multilingual by default".)"""

from __future__ import annotations

import contextlib
import html
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from apps.instance.models import InstanceSettings
from apps.instance.selectors import instance_settings
from apps.library.ingest.sync import source_sync
from apps.library.languages import passage_language
from tests.support.documents import letter_text
from tests.support.fixtures import signed_in

ADVICE = "of the library's passages are not in English"


def write_letters(vault, count: int, *, german: bool) -> None:
    prefix = "brief" if german else "letter"
    for n in range(count):
        text = letter_text(seed=n + (100 if german else 0), sentences=8, german=german)
        vault.write(f"post/{prefix}-{n:02}.md", f"# {prefix.title()} {n}\n\n{text}\n")


def doctor_report() -> str:
    report = StringIO()
    # A PROBLEM line makes it exit non-zero; the report says which.
    with contextlib.suppress(CommandError):
        call_command("kb", "doctor", stdout=report)
    return report.getvalue()


def settings_page(admin) -> str:
    row = instance_settings()
    url = reverse("admin:instance_instancesettings_change", args=[row.pk])
    return html.unescape(signed_in(admin).get(url).content.decode())


@pytest.fixture
def library(owner, vault, make_source, embedder):
    def make(*, german: int, english: int) -> None:
        write_letters(vault, german, german=True)
        write_letters(vault, english, german=False)
        source_sync(source=make_source(owner, vault), embedder=embedder)

    return make


def test_a_mostly_german_library_is_told_to_choose_the_multilingual_model(library, admin):
    library(german=26, english=4)

    report = doctor_report()
    assert "PROBLEM [languages]" in report
    assert "German" in report and "Universal Sentence Encoder multilingual v3" in report
    page = settings_page(admin)
    assert ADVICE in page and "German" in page


def test_an_english_library_with_a_few_german_notes_hears_nothing(library, admin):
    library(german=4, english=26)

    assert "ok      [languages]" in doctor_report()
    assert ADVICE not in settings_page(admin)


def test_once_the_admin_chose_the_multilingual_model_nothing_is_said(library, admin):
    library(german=26, english=4)
    InstanceSettings.objects.filter(pk=instance_settings().pk).update(
        embedding_model="use-multilingual-v3"
    )

    assert "ok      [languages]" in doctor_report()
    assert ADVICE not in settings_page(admin)


def test_a_small_library_is_not_judged(library, admin):
    library(german=5, english=0)

    assert "ok      [languages]" in doctor_report()


@pytest.mark.parametrize(
    "text, language",
    [
        ("Die Heizung wird am Montag gewartet, und der Techniker kommt bei uns vorbei.", "de"),
        ("The boiler is serviced on Monday and the engineer will come to the house.", "en"),
        ("Le chat dort sur la table et il ne veut pas sortir avec nous.", "fr"),
        ("Служба отопления придёт в понедельник утром.", "ru"),
        ("| 12 | 14 | 19 |\n| 3,40 € | 7,10 € |", None),  # a table: too few words to tell
    ],
)
def test_a_passages_language_is_read_from_its_common_words_or_script(text, language):
    assert passage_language(text) == language
