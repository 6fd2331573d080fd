"""What the settings page and the command accept, and where files may go."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from apps.digest import config
from apps.digest.formatting import inline, link


def test_limited_entries_parse_from_lines_commas_or_words():
    assert config.parse_arxiv("cs.LG:50\ncs.CL:20, hep-th") == [
        ("cs.LG", 50),
        ("cs.CL", 20),
        ("hep-th", config.DEFAULT_LIMIT),
    ]
    assert config.parse_keywords(["spatial transcriptomics:30"]) == [
        ("spatial transcriptomics", 30)
    ]
    assert config.parse_biorxiv("Cell_Biology:10") == [("cell biology", 10)]


@pytest.mark.parametrize(
    ("parse", "value", "message"),
    [
        (config.parse_arxiv, "cs.LG:lots", "whole number"),
        (config.parse_arxiv, "cs.LG:0", "between 1 and"),
        (config.parse_arxiv, "cs.LG:501", "between 1 and"),
        (config.parse_arxiv, "cat:cs.LG:5", "not an arXiv category"),
        (config.parse_arxiv, "cs.LG:5\ncs.lg:5", "listed twice"),
        (config.parse_biorxiv, "bio/informatics:5", "not a bioRxiv category"),
        (config.parse_keywords, "ml:5", "at least 3"),
    ],
)
def test_bad_entries_are_named(parse, value, message):
    with pytest.raises(ValidationError, match=message):
        parse(value)


def test_every_bad_entry_is_reported_at_once():
    with pytest.raises(ValidationError) as failure:
        config.parse_arxiv("bad cat:1\ncs.LG:0\ncs.CL:5")
    assert len(failure.value.messages) == 2


@pytest.mark.parametrize("folder", ["weekly", "work/ml digests", "2026"])
def test_plain_subfolders_are_allowed(folder):
    assert config.clean_folder(f"/{folder}/") == folder


@pytest.mark.parametrize(
    "folder", ["..", "../other", "a/../../b", ".hidden", "-x", "a\\b", "a/b/c/d", "x/./y"]
)
def test_folders_that_could_leave_the_digest_area_are_refused(folder):
    with pytest.raises(ValidationError):
        config.clean_folder(folder)


def test_a_planted_symlink_cannot_lead_outside(settings, tmp_path):
    settings.DATA_DIR = tmp_path / "data"
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    root = config.user_root(7)
    root.mkdir(parents=True)
    (root / "weekly").symlink_to(outside)
    with pytest.raises(ValidationError, match="outside"):
        config.folder_path(7, "weekly")
    assert config.folder_path(7, "fine") == (root / "fine").resolve()


def test_untrusted_text_stays_text_in_markdown():
    assert inline("# Heading [x](javascript:alert(1)) <b>*bold*</b>\nnext") == (
        "\\# Heading \\[x\\](javascript:alert(1)) \\<b\\>\\*bold\\*\\</b\\> next"
    )
    assert inline("1. not a list") == "1\\. not a list"
    assert link("A [title]", "https://doi.org/10.1/a b>") == (
        "[A \\[title\\]](<https://doi.org/10.1/a%20b%3E>)"
    )
