"""Name-level facts: dates in names and text, version/copy markers, family stems."""

from __future__ import annotations

import datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apps.library.versions import dates
from apps.library.versions.naming import (
    DRAFT_RANK,
    FINAL_RANK,
    DateMatch,
    VersionMarker,
    date_from_filename,
    date_from_text,
    family_stem,
    is_copy_name,
    is_generic_name,
    version_marker,
)

D = datetime.date

# --- date_from_filename -----------------------------------------------------------


@pytest.mark.parametrize(
    ("stem", "value", "precision"),
    [
        # year-first numeric, day precision
        ("2026-10-05", D(2026, 10, 5), "day"),
        ("2026_10_05", D(2026, 10, 5), "day"),
        ("2026.10.05", D(2026, 10, 5), "day"),
        ("notes 2026 10 05", D(2026, 10, 5), "day"),
        ("20261005", D(2026, 10, 5), "day"),
        ("standup_20261005", D(2026, 10, 5), "day"),
        ("journal-2024-02-29", D(2024, 2, 29), "day"),  # leap day
        ("2100-12-31", D(2100, 12, 31), "day"),  # upper year bound
        ("1990-01-01", D(1990, 1, 1), "day"),  # lower year bound
        # year-first numeric, month precision
        ("2026-10", D(2026, 10, 1), "month"),
        ("budget_2026_10", D(2026, 10, 1), "month"),
        ("budget.2026.10", D(2026, 10, 1), "month"),
        ("report_2026-10_v2", D(2026, 10, 1), "month"),
        # month-year numeric
        ("10-2026", D(2026, 10, 1), "month"),
        ("notes_10_2026", D(2026, 10, 1), "month"),
        ("resume_v2_10_2026", D(2026, 10, 1), "month"),
        # month names, glued or separated, any case
        ("career_plan_oct2026", D(2026, 10, 1), "month"),
        ("career_plan_october2026", D(2026, 10, 1), "month"),
        ("plan_oct_2026", D(2026, 10, 1), "month"),
        ("Plan Oct 2026", D(2026, 10, 1), "month"),
        ("plan-october-2026", D(2026, 10, 1), "month"),
        ("plan.OCT.2026", D(2026, 10, 1), "month"),
        ("plan_sept2026", D(2026, 9, 1), "month"),
        ("plan_sep2026", D(2026, 9, 1), "month"),
        ("plan_september_2026", D(2026, 9, 1), "month"),
        ("plan_jun2026", D(2026, 6, 1), "month"),
        ("plan_june2026", D(2026, 6, 1), "month"),
        ("may_2026", D(2026, 5, 1), "month"),
        ("handoff_aug2026 (1)", D(2026, 8, 1), "month"),
        # month names with a day
        ("meeting_05_oct_2026", D(2026, 10, 5), "day"),
        ("meeting 5 Oct 2026", D(2026, 10, 5), "day"),
        ("meeting_05oct2026", D(2026, 10, 5), "day"),
        ("meeting_oct_05_2026", D(2026, 10, 5), "day"),
        ("Oct 5, 2026 minutes", D(2026, 10, 5), "day"),
        # unicode around the date
        ("Überblick_2026-10-05", D(2026, 10, 5), "day"),
    ],
)
def test_date_from_filename_reads_every_form(stem: str, value: datetime.date, precision: str):
    match = date_from_filename(stem)
    assert match is not None
    assert (match.value, match.precision) == (value, precision)


def test_date_from_filename_reports_the_span_in_the_input():
    assert date_from_filename("Career_Plan_Oct2026 (1)") == DateMatch(
        D(2026, 10, 1), "month", (12, 19)
    )
    assert date_from_filename("x_2026-10-05_y").span == (2, 12)


@pytest.mark.parametrize(
    "stem",
    [
        "v2026",  # a version, not a year
        "v2026-10",  # glued to a letter
        "2026-13-01",  # month 13
        "2026-02-30",  # no such day
        "2026-10-45",  # bad day: not October either
        "1234567",  # seven digits
        "123456789",  # nine digits
        "20261399",  # phone-number-like, month 13
        "202610051",  # date inside a longer digit run
        "rev10",
        "chapter12",
        "chapter_10_2026",  # a part number, not a month
        "1989-12-31",  # before 1990
        "2101-01",  # after 2100
        "13-2026",  # month 13
        "05-10-2026",  # day/month order unknowable
        "notes_2026-10_05",  # mixed separators
        "2026oct",  # year-first month name: not read
        "octopus2026",  # "oct" inside a word
        "mayday 2026",
        "2026",  # a bare year has no month
        "taxes_2025",
        "index",
        "",
    ],
)
def test_date_from_filename_rejects(stem: str):
    assert date_from_filename(stem) is None


@pytest.mark.parametrize(
    ("stem", "value"),
    [
        # most precise wins, wherever it is
        ("plan_2026-09-01_oct2026", D(2026, 9, 1)),
        ("plan_oct2026_2026-09-01", D(2026, 9, 1)),
        # among equals the last
        ("a_2026-01-01_b_2026-02-02", D(2026, 2, 2)),
        ("a_jan2026_b_feb2026", D(2026, 2, 1)),
        # overlapping readings: the more precise one
        ("notes_oct_2026-10-05", D(2026, 10, 5)),
    ],
)
def test_date_from_filename_several_dates(stem: str, value: datetime.date):
    match = date_from_filename(stem)
    assert match is not None and match.value == value


# --- date_from_text ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value", "precision"),
    [
        ("2026-08-19", D(2026, 8, 19), "day"),
        ("Updated 2026-08-19T10:00:00Z", D(2026, 8, 19), "day"),
        ("2026/8/19", D(2026, 8, 19), "day"),
        ("October 10, 2026", D(2026, 10, 10), "day"),
        ("# Meeting, Oct 10, 2026", D(2026, 10, 10), "day"),
        ("Oct. 10 2026", D(2026, 10, 10), "day"),
        ("10 October 2026", D(2026, 10, 10), "day"),
        ("10 Oct 2026", D(2026, 10, 10), "day"),
        ("the 10th of October, 2026", D(2026, 10, 10), "day"),
        ("August 10th, 2026", D(2026, 8, 10), "day"),
        ("Sept 1st, 2026", D(2026, 9, 1), "day"),
        ("October 2026", D(2026, 10, 1), "month"),
        ("Plan for Oct 2026", D(2026, 10, 1), "month"),
        ("SEPT 2026", D(2026, 9, 1), "month"),
    ],
)
def test_date_from_text_reads_every_form(text: str, value: datetime.date, precision: str):
    match = date_from_text(text)
    assert match is not None
    assert (match.value, match.precision) == (value, precision)
    assert str(value.year) in text[match.span[0] : match.span[1]]


def test_date_from_text_returns_the_first_in_text_order():
    text = "Written October 2026.\nMeeting on 2026-08-19 and again on Sept 3, 2026."
    assert date_from_text(text) == DateMatch(D(2026, 10, 1), "month", (8, 20))
    # An invalid date is skipped, not fatal.
    assert date_from_text("See 2026-13-01 then May 2026").value == D(2026, 5, 1)
    # The day reading wins over the month reading inside it.
    assert date_from_text("10 October 2026").span == (0, 15)


@pytest.mark.parametrize(
    "text",
    [
        "Octopus 2026",
        "Mayor 2026 campaign",
        "October 1989",
        "2101-01-01",
        "2026-02-30",
        "Chapter 12",
        "call 20261399",
        "version 2026",
        "",
    ],
)
def test_date_from_text_rejects(text: str):
    assert date_from_text(text) is None


# --- version_marker ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("stem", "rank"),
    [
        ("report draft", DRAFT_RANK),
        ("Report DRAFT", DRAFT_RANK),
        ("notes_wip", DRAFT_RANK),
        ("report", 0.0),
        ("resume_v1_aug2026", 1.0),
        ("resume_v2_oct2026", 2.0),
        ("report v 3", 3.0),
        ("report V10", 10.0),
        ("report version 2", 2.0),
        ("report_version_4", 4.0),
        ("spec rev1", 1.0),
        ("spec_rev2", 2.0),
        ("spec r3", 3.0),
        ("spec_v1.2", 1.002),
        ("spec_v1.10", 1.010),
        ("report final", FINAL_RANK),
        ("Report FINAL", FINAL_RANK),
        ("report_final_v2", FINAL_RANK),  # final wins
        ("report final draft", FINAL_RANK),
        ("report draft v2", 1.5),  # a draft of v2: after v1, before v2
        ("report draft 2", 1.5),
        ("v2_draft", 1.5),
        # not version markers
        ("r2d2 notes", 0.0),
        ("star r 3x", 0.0),
        ("version notes", 0.0),
        ("revenue 2026", 0.0),
        ("draftsman", 0.0),
        ("finally", 0.0),
    ],
)
def test_version_rank(stem: str, rank: float):
    assert version_marker(stem).rank == pytest.approx(rank)


def test_ranks_order_draft_none_v1_v2_final():
    stems = ["report final", "report v2", "report", "report draft", "report v1"]
    ordered = sorted(stems, key=lambda s: version_marker(s).rank)
    assert ordered == ["report draft", "report", "report v1", "report v2", "report final"]
    assert version_marker("spec v1.9").rank < version_marker("spec v1.10").rank


@pytest.mark.parametrize(
    ("stem", "copy_number"),
    [
        ("handoff_aug2026 (1)", 1),
        ("handoff (2)", 2),
        ("handoff(12)", 12),
        ("notes 1", 1),
        ("notes 2", 2),
        ("untitled 9", 9),
        ("report_2026-10 1", 1),
        ("2026-10-05 1", 1),  # a daily note's copy: the head is a date
        ("plan_backup", 1),
        ("plan backup", 1),
        ("plan_bak", 1),
        ("plan copy", 1),
        ("plan_copy_2", 2),
        ("notes copy 2", 2),
        ("notes - Copy", 1),
        ("notes - Copy (2)", 2),
        ("Copy of notes", 1),
        ("plan_old", 1),
        ("plan old", 1),
        ("career_plan_oct2026_backup", 1),
        ("career_plan_backup_oct2026", 1),
        ("plan_backup_v2", 1),
        ("plan backup old", 1),
        ("report final 2", 2),
    ],
)
def test_copy_markers(stem: str, copy_number: int):
    marker = version_marker(stem)
    assert marker.is_copy and is_copy_name(stem)
    assert marker.copy_number == copy_number


@pytest.mark.parametrize(
    "stem",
    [
        "notes",
        "chapter 1",  # a sequence word: chapter one, not a copy
        "part 2",
        "week 3",
        "notes 10",  # only 1-9 counts
        "notes_1",  # the counter is space-separated
        "2026 1",  # nothing but numbers before it
        "report v 3",  # the digit belongs to the version
        "report draft 2",
        "backup_strategy",  # copy words only at the end...
        "backup",  # ...and never as the whole name
        "old",
        "old_house_notes",
        "copy_editing_guide",
        "copyright notes",
        "notes (0)",
        "notes (2026)",
        "report final",
    ],
)
def test_not_copies(stem: str):
    assert version_marker(stem).is_copy is False
    assert version_marker(stem).copy_number == 0
    assert not is_copy_name(stem)


def test_version_marker_is_a_frozen_value():
    marker = version_marker("plan (2)")
    assert marker == VersionMarker(rank=0.0, is_copy=True, copy_number=2)
    with pytest.raises(AttributeError):
        marker.rank = 1.0  # type: ignore[misc]


# --- family_stem ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("stem", "family"),
    [
        ("arjun_master_handoff_aug2026 (1)", "arjun master handoff"),
        ("career_plan_oct2026_backup", "career plan"),
        ("resume_v1_aug2026", "resume"),
        ("Report FINAL", "report"),
        ("2026-10-05", ""),
        ("20261005", ""),
        ("Oct 2026", ""),
        ("2026-10-05 (1)", ""),
        ("index", "index"),
        ("notes - Copy", "notes"),
        ("Copy of notes", "notes"),
        ("notes copy 2", "notes"),
        ("plan.backup", "plan"),
        ("notes (draft)", "notes"),
        ("meeting__notes--2026-10-05", "meeting notes"),
        ("  spaced   out  ", "spaced out"),
        ("Über_Notizen_v2", "über notizen"),
        ("résumé final", "résumé"),
        ("chapter 1", "chapter 1"),
        ("chapter_1_oct2026", "chapter 1"),
        ("untitled 3", "untitled"),
        # marker words kept when nothing else is left
        ("draft", "draft"),
        ("draft (1)", "draft"),
        ("final_oct2026", "final"),
        ("v2", "v2"),
        ("backup", "backup"),
        ("rev10", "rev10"),
        ("05-10-2026", "05 10 2026"),
    ],
)
def test_family_stem(stem: str, family: str):
    assert family_stem(stem) == family


def test_family_stem_normalises_unicode():
    nfd = "U\u0308ber_notes"  # macOS file names arrive decomposed
    assert family_stem(nfd) == family_stem("\u00dcber notes") == "\u00fcber notes"


@pytest.mark.parametrize(
    "stems",
    [
        [
            "career_plan_jun2026",
            "career_plan_oct2026_backup",
            "Career Plan Oct 2026",
            "career_plan",
        ],
        ["resume_v1_aug2026", "resume_v2_oct2026", "Resume (2)", "resume"],
        ["report draft", "report final", "report", "Report - Copy", "report 1", "report v3"],
        ["handoff_aug2026 (1)", "handoff_2026-08-19", "handoff_20260819", "handoff_08_2026"],
        ["plan_backup", "plan_bak", "plan old", "Copy of plan", "plan copy"],
    ],
)
def test_families_that_match(stems: list[str]):
    assert len({family_stem(s) for s in stems}) == 1


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("career_plan", "career_goals"),
        ("career_plan_oct2026", "career_goals_oct2026"),
        ("chapter 1", "chapter 2"),
        ("backup_strategy", "strategy"),
        ("taxes_2024", "taxes_2025"),
        ("report", "reports"),
    ],
)
def test_families_that_differ(a: str, b: str):
    assert family_stem(a) != family_stem(b)


# --- is_generic_name --------------------------------------------------------------


@pytest.mark.parametrize(
    "stem",
    [
        "index",
        "README",
        "todo",
        "TODOs",
        "notes",
        "Notes (1)",
        "note",
        "untitled",
        "Untitled 1",
        "Untitled-12",
        "inbox",
        "scratch",
        "draft",
        "meeting notes",
        "Meeting_Notes_2026-10-05",
        "journal",
        "log",
        "CHANGELOG",
        "tasks",
        "ideas",
        "home",
        "overview",
        "summary",
        "notes_oct2026",
        "2026-10-05",  # a daily note: shared by unrelated folders
    ],
)
def test_generic_names(stem: str):
    assert is_generic_name(stem)


@pytest.mark.parametrize(
    "stem",
    ["career_plan", "report draft", "index of recipes", "project notes", "resume_v2", "logbook"],
)
def test_specific_names(stem: str):
    assert not is_generic_name(stem)


# --- properties -------------------------------------------------------------------

# Words that are themselves markers or month names would be read as such; a
# generic stem is made of other words.
_RESERVED = (
    frozenset(
        [
            *("jan", "january", "feb", "february", "mar", "march", "apr", "april", "may"),
            *("jun", "june", "jul", "july", "aug", "august", "sep", "sept", "september"),
            *("oct", "october", "nov", "november", "dec", "december"),
            *("draft", "wip", "final", "copy", "backup", "bak", "old", "of"),
            *("v", "ver", "version", "rev", "revision", "r", "st", "nd", "rd", "th"),
        ]
    )
    | dates._SEQUENCE_WORDS
)  # "chapter 1" is chapter one, never a copy
_word = st.from_regex(r"[a-z]{2,9}", fullmatch=True).filter(lambda w: w not in _RESERVED)
_stem = st.builds(
    lambda words, sep, title: sep.join(w.title() if title else w for w in words),
    st.lists(_word, min_size=1, max_size=4),
    st.sampled_from(["_", " ", "-", "."]),
    st.booleans(),
)
_dates = st.dates(min_value=D(1990, 1, 1), max_value=D(2100, 12, 31))

_COPY_MARKERS = [
    "{} (1)",
    "{} (2)",
    "{}(3)",
    "{} 1",
    "{} 7",
    "{}_backup",
    "{} backup",
    "{}_bak",
    "{} copy",
    "{} - Copy",
    "{} - Copy (2)",
    "{} copy 2",
    "Copy of {}",
    "{}_old",
]

_MONTHS = [
    ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"],
    [
        *("January", "February", "March", "April", "May", "June", "July"),
        *("August", "September", "October", "November", "December"),
    ],
]

# Every supported file-name form, with the precision it carries.
_DAY_FORMS = [
    lambda d: f"{d:%Y-%m-%d}",
    lambda d: f"{d:%Y_%m_%d}",
    lambda d: f"{d:%Y.%m.%d}",
    lambda d: f"{d:%Y%m%d}",
    lambda d: f"{d.day:02d}_{_MONTHS[0][d.month - 1]}_{d.year}",
    lambda d: f"{d.day} {_MONTHS[1][d.month - 1]} {d.year}",
    lambda d: f"{_MONTHS[0][d.month - 1]}_{d.day:02d}_{d.year}",
]
_MONTH_FORMS = [
    lambda d: f"{d:%Y-%m}",
    lambda d: f"{d:%Y_%m}",
    lambda d: f"{d:%m-%Y}",
    lambda d: f"{d:%m_%Y}",
    lambda d: f"{_MONTHS[0][d.month - 1]}{d.year}",
    lambda d: f"{_MONTHS[1][d.month - 1]}{d.year}",
    lambda d: f"{_MONTHS[0][d.month - 1].upper()}_{d.year}",
    lambda d: f"{_MONTHS[1][d.month - 1]} {d.year}",
    lambda d: f"{_MONTHS[1][d.month - 1].lower()}-{d.year}",
]
_ALL_FORMS = [(f, "day") for f in _DAY_FORMS] + [(f, "month") for f in _MONTH_FORMS]


@settings(max_examples=100, deadline=None)
@given(stem=_stem, marker=st.sampled_from(_COPY_MARKERS))
def test_copy_marker_does_not_change_family(stem: str, marker: str):
    copied = marker.format(stem)
    assert family_stem(copied) == family_stem(stem)
    assert is_copy_name(copied)
    assert not is_copy_name(stem)


@settings(max_examples=100, deadline=None)
@given(
    stem=_stem,
    date=_dates,
    form=st.sampled_from(_ALL_FORMS),
    layout=st.sampled_from(["{s}_{d}", "{d}_{s}", "{s} {d}", "{s}-{d}", "{s} ({d})"]),
)
def test_date_does_not_change_family(stem: str, date: datetime.date, form, layout: str):
    dated = layout.format(s=stem, d=form[0](date))
    assert family_stem(dated) == family_stem(stem)


@settings(max_examples=200, deadline=None)
@given(date=_dates, form=st.sampled_from(_ALL_FORMS), prefix=st.sampled_from(["", "notes_"]))
def test_formatted_date_reads_back(date: datetime.date, form, prefix: str):
    formatter, precision = form
    text = formatter(date)
    match = date_from_filename(prefix + text)
    expected = date if precision == "day" else date.replace(day=1)
    assert match == DateMatch(expected, precision, (len(prefix), len(prefix) + len(text)))


@settings(max_examples=100, deadline=None)
@given(
    date=_dates,
    form=st.sampled_from(
        [
            lambda d: f"{d:%Y-%m-%d}",
            lambda d: f"{_MONTHS[1][d.month - 1]} {d.day}, {d.year}",
            lambda d: f"{_MONTHS[0][d.month - 1]} {d.day} {d.year}",
            lambda d: f"{d.day} {_MONTHS[1][d.month - 1]} {d.year}",
            lambda d: f"{d.day}th of {_MONTHS[0][d.month - 1]} {d.year}",
        ]
    ),
)
def test_text_date_reads_back(date: datetime.date, form):
    match = date_from_text(f"# Weekly review\nWritten on {form(date)}.\n")
    assert match is not None and match.value == date and match.precision == "day"
