"""The containment policy: every name a person or a model might send, and what
is on disk afterwards."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apps.core.errors import Refused
from apps.drafts import sandbox

KEY = "0123456789abcdef"


@pytest.fixture
def folder(drafts_root):
    return sandbox.create_folder(7, KEY)


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("../../etc/passwd", "'/'"),
        ("/abs.md", "'/'"),
        ("..\\up.md", "'\\'"),
        (".hidden.md", "dot"),
        ("..", "dot"),
        ("-latex=pdflatex -shell-escape.tex", "'-'"),
        ("a.exe", "not “.exe”"),
        ("noext", "not “noext”"),
        ("tab\there.md", "control"),
        (" padded.md", "space"),
        ("x" * 200 + ".md", "at most"),
        ("", "needs a name"),
    ],
)
def test_bad_names_are_refused_with_a_reason(folder, name, reason):
    with pytest.raises(Refused, match=None) as refused:
        sandbox.resolve(7, KEY, name)
    assert reason in str(refused.value)


def test_a_symlink_planted_in_a_draft_is_refused_for_reading_and_writing(folder, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("secret")
    os.symlink(outside / "secret.md", folder / "con.md")
    os.symlink("/etc", folder / "etc.md")
    for name in ("con.md", "etc.md"):
        with pytest.raises(Refused, match="outside its draft"):
            sandbox.read_text(7, KEY, name)
        with pytest.raises(Refused, match="outside its draft"):
            sandbox.write_text(7, KEY, name, "overwritten")
    assert (outside / "secret.md").read_text() == "secret"
    assert sandbox.list_files(7, KEY) == []


def test_a_symlinked_draft_folder_is_refused(drafts_root, tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (drafts_root / "7").mkdir(parents=True)
    os.symlink(outside, drafts_root / "7" / KEY)
    with pytest.raises(Refused):
        sandbox.write_text(7, KEY, "a.md", "x")
    with pytest.raises(Refused):
        sandbox.remove_folder(7, KEY)
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize("key", ["../../etc", "ABCDEF0123456789", "0123", "0123456789abcdef/.."])
def test_only_real_draft_keys_are_accepted(drafts_root, key):
    with pytest.raises(Refused, match="not a draft"):
        sandbox.resolve(7, key, "a.md")


def test_writes_are_whole_and_capped(folder, settings):
    settings.DRAFTS_MAX_FILE_BYTES = 1_000
    sandbox.write_text(7, KEY, "a.md", "first")
    with pytest.raises(Refused, match="limit"):
        sandbox.write_text(7, KEY, "a.md", "x" * 1_001)
    assert sandbox.read_text(7, KEY, "a.md") == "first"
    assert sorted(os.listdir(folder)) == ["a.md"]  # no temp file left behind


def test_listing_shows_only_files_a_person_can_open(folder):
    sandbox.write_text(7, KEY, "b.md", "")
    sandbox.write_text(7, KEY, "A.tex", "")
    (folder / "notes.exe").write_text("")
    (folder / ".hidden.md").write_text("")
    (folder / "sub.md").mkdir()
    assert sandbox.list_files(7, KEY) == ["A.tex", "b.md"]


_name_chars = st.sampled_from([*"ab.-_/\\ \x00", "..", "é", "md", "tex", "\n"])


@settings(
    max_examples=300,
    # Set here, this list replaces the suite's profile (tests/conftest.py): keep too_slow in it.
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(parts=st.lists(_name_chars, min_size=1, max_size=12))
def test_any_name_either_resolves_inside_the_draft_or_is_refused(folder, parts):
    name = "".join(parts)
    try:
        path = sandbox.resolve(7, KEY, name)
    except Refused:
        return
    assert path.parent == folder
    assert path.name == name
    assert not name.startswith((".", "-"))
    sandbox.write_text(7, KEY, name, "ok")
    assert sandbox.read_text(7, KEY, name) == "ok"
    assert all(entry.parent == folder for entry in folder.iterdir())


def test_a_symlink_swapped_in_after_the_check_is_not_followed_when_read(
    folder, tmp_path, monkeypatch
):
    # The race O_NOFOLLOW closes: the name is a regular file when `resolve`
    # checks it, and a symlink by the time it is opened.
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("the neighbour's secret")
    (folder / "notes.md").write_text("my notes")
    checked = sandbox.resolve

    def check_then_swap(owner_id, key, filename):
        path = checked(owner_id, key, filename)
        path.unlink()
        os.symlink(outside / "secret.md", path)
        return path

    monkeypatch.setattr(sandbox, "resolve", check_then_swap)
    with pytest.raises(Refused, match="cannot be read"):
        sandbox.read_text(7, KEY, "notes.md")
