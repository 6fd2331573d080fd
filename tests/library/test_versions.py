"""Version families, latest flags, exact duplicates and time modes, over real
synced vaults: what a person notices when they keep several versions of a note."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from apps.library.ingest.sync import source_sync
from apps.library.models import Chunk, Document, DocumentFile
from apps.library.search import search

pytestmark = pytest.mark.django_db


def at(year: int, month: int, day: int) -> float:
    """A file modification time (noon UTC, so the local date is the same day)."""
    return datetime(year, month, day, 12, tzinfo=UTC).timestamp()


SAME_MTIME = at(2026, 3, 1)


def doc(source, path: str) -> Document:
    """The document a path belongs to (an exact copy's path finds its original)."""
    return DocumentFile.objects.get(source=source, path=path).document


def synced(owner, vault, make_source, embedder, **options):
    source = make_source(owner, vault, **options)
    report = source_sync(source=source, embedder=embedder)
    assert report.failed == []
    return source


def latest_paths(source) -> set[str]:
    return set(
        Document.objects.filter(source=source, is_latest=True).values_list("path", flat=True)
    )


# --- families from names --------------------------------------------------------


def test_dated_names_form_one_family_and_the_newest_date_is_latest(
    owner, vault, make_source, embedder
):
    # The older version was touched last: the date in the name still decides.
    vault.write("career_plan_oct2026.md", "# Career plan\n\nOctober goals.\n", mtime=at(2026, 3, 1))
    vault.write("career_plan_jun2026.md", "# Career plan\n\nJune goals.\n", mtime=at(2026, 11, 1))
    source = synced(owner, vault, make_source, embedder)
    june, october = doc(source, "career_plan_jun2026.md"), doc(source, "career_plan_oct2026.md")
    assert june.family == october.family
    assert october.is_latest and not june.is_latest
    assert (june.effective_date, june.date_source) == (date(2026, 6, 1), "filename")
    assert (october.effective_date, october.date_source) == (date(2026, 10, 1), "filename")


def test_numbered_versions_without_dates_make_the_highest_number_latest(
    owner, vault, make_source, embedder
):
    vault.write("resume_v1.md", "# Resume\n\nJunior developer.\n", mtime=SAME_MTIME)
    vault.write("resume_v2.md", "# Resume\n\nSenior developer.\n", mtime=SAME_MTIME)
    source = synced(owner, vault, make_source, embedder)
    first, second = doc(source, "resume_v1.md"), doc(source, "resume_v2.md")
    assert first.family == second.family
    assert second.is_latest and not first.is_latest
    assert second.version_rank > first.version_rank


def test_a_version_number_beats_a_later_modification_time(owner, vault, make_source, embedder):
    # Fixing a typo in v1 last week does not make it newer than v2: an mtime
    # is "undated" (never shown) and the name's version marker says more.
    vault.write("resume_v2.md", "# Resume\n\nSenior developer.\n", mtime=at(2026, 3, 1))
    vault.write("resume_v1.md", "# Resume\n\nJunior developer.\n", mtime=at(2026, 9, 1))
    source = synced(owner, vault, make_source, embedder)
    assert doc(source, "resume_v2.md").is_latest
    assert not doc(source, "resume_v1.md").is_latest


def test_a_final_report_is_newer_than_its_draft(owner, vault, make_source, embedder):
    vault.write("report draft.md", "# Report\n\nRough numbers.\n", mtime=SAME_MTIME)
    vault.write("report final.md", "# Report\n\nChecked numbers.\n", mtime=SAME_MTIME)
    source = synced(owner, vault, make_source, embedder)
    draft, final = doc(source, "report draft.md"), doc(source, "report final.md")
    assert draft.family == final.family
    assert final.is_latest and not draft.is_latest


def test_unrelated_names_are_separate_families(owner, vault, make_source, embedder):
    vault.write("career_plan_oct2026.md", "# Career plan\n\nGoals.\n")
    vault.write("garden_plan_oct2026.md", "# Garden plan\n\nTulips.\n")
    source = synced(owner, vault, make_source, embedder)
    assert (
        doc(source, "career_plan_oct2026.md").family != doc(source, "garden_plan_oct2026.md").family
    )
    assert latest_paths(source) == {"career_plan_oct2026.md", "garden_plan_oct2026.md"}


# --- exact and near duplicates ----------------------------------------------------

PLAN = "# Plan\n\nMove to Lisbon in spring; budget 2400 euros a month.\n"


def test_an_exact_copy_is_one_document_listing_both_paths(owner, vault, make_source, embedder):
    vault.write("plan_oct2026.md", PLAN)
    vault.write("plan_oct2026_backup.md", PLAN)
    source = synced(owner, vault, make_source, embedder)
    assert Document.objects.filter(source=source).count() == 1
    document = Document.objects.get(source=source)
    assert document.path == "plan_oct2026.md"
    assert sorted(document.files.values_list("path", flat=True)) == [
        "plan_oct2026.md",
        "plan_oct2026_backup.md",
    ]
    results = search(
        user=owner, query="Lisbon budget euros", mode="lookup", embedder=embedder
    ).results
    assert [r.path for r in results] == ["plan_oct2026.md"]
    assert results[0].duplicate_paths == ["plan_oct2026_backup.md"]


def test_an_original_added_after_its_copy_becomes_the_primary_path(
    owner, vault, make_source, embedder
):
    vault.write("plan_oct2026_backup.md", PLAN)
    source = synced(owner, vault, make_source, embedder)
    assert Document.objects.get(source=source).path == "plan_oct2026_backup.md"
    vault.write("plan_oct2026.md", PLAN)
    passages = embedder.passages
    source_sync(source=source, embedder=embedder)
    assert embedder.passages == passages  # the same bytes are not embedded again
    document = Document.objects.get(source=source)
    assert document.path == "plan_oct2026.md"
    results = search(
        user=owner, query="Lisbon budget euros", mode="lookup", embedder=embedder
    ).results
    assert results[0].path == "plan_oct2026.md"
    assert results[0].duplicate_paths == ["plan_oct2026_backup.md"]


def test_a_near_duplicate_with_one_number_changed_stays_a_separate_version(
    owner, vault, make_source, embedder
):
    vault.write("plan_oct2026.md", PLAN.replace("2400", "2650"), mtime=SAME_MTIME)
    vault.write("plan_oct2026_backup.md", PLAN, mtime=SAME_MTIME)
    source = synced(owner, vault, make_source, embedder)
    assert Document.objects.filter(source=source).count() == 2
    original, copy = doc(source, "plan_oct2026.md"), doc(source, "plan_oct2026_backup.md")
    assert original.pk != copy.pk
    assert original.family == copy.family
    assert original.is_latest and not copy.is_latest
    assert DocumentFile.objects.filter(source=source).count() == 2


def test_a_changed_number_across_dated_versions_keeps_both_and_present_shows_the_new_one_first(
    owner, vault, make_source, embedder
):
    vault.write("budget_sep2026.md", "# Budget\n\nRent is 1200 euros, paid on the first.\n")
    vault.write("budget_oct2026.md", "# Budget\n\nRent is 1250 euros, paid on the first.\n")
    source = synced(owner, vault, make_source, embedder)
    assert Document.objects.filter(source=source).count() == 2
    results = search(user=owner, query="rent euros", mode="present", embedder=embedder).results
    assert "1250" in results[0].text and results[0].is_latest
    older = [r for r in results if "1200" in r.text]
    assert all(not r.is_latest and r.superseded_by.startswith("budget_oct2026.md") for r in older)
    latest_only = search(
        user=owner, query="rent euros", mode="present", latest_only=True, embedder=embedder
    )
    assert not any("1200" in r.text for r in latest_only.results)


# --- families across folders ------------------------------------------------------


def test_index_notes_in_two_folders_are_two_families(owner, vault, make_source, embedder):
    vault.write("work/index.md", "# Index\n\nWork projects: PixelNet, billing rewrite.\n")
    vault.write("home/index.md", "# Index\n\nHome: garden, taxes, car service.\n")
    source = synced(owner, vault, make_source, embedder)
    work, home = doc(source, "work/index.md"), doc(source, "home/index.md")
    assert work.family != home.family
    assert work.is_latest and home.is_latest


LONG_NOTE = (
    "# Thesis plan\n\n"
    "Chapter one reviews segmentation models for satellite images and their failure modes. "
    "Chapter two describes the labelled dataset from the northern farms and how it was cleaned. "
    "Chapter three compares three training schedules on the same hardware budget. "
    "Chapter four discusses what the farmers said when they saw the maps. "
    "The defence is planned for {when} with Professor Lindqvist as examiner.\n"
)


def test_a_generic_name_never_links_folders_even_with_the_same_text(
    owner, vault, make_source, embedder
):
    vault.write("2025/index.md", LONG_NOTE.format(when="May"), mtime=at(2026, 1, 1))
    vault.write("2026/index.md", LONG_NOTE.format(when="June"), mtime=at(2026, 2, 1))
    source = synced(owner, vault, make_source, embedder)
    old, new = doc(source, "2025/index.md"), doc(source, "2026/index.md")
    assert old.family != new.family
    assert old.is_latest and new.is_latest


def test_the_same_note_under_the_same_name_in_two_folders_is_one_family(
    owner, vault, make_source, embedder
):
    vault.write("archive/thesis_plan.md", LONG_NOTE.format(when="May"), mtime=at(2026, 1, 1))
    vault.write("current/thesis_plan.md", LONG_NOTE.format(when="June"), mtime=at(2026, 2, 1))
    source = synced(owner, vault, make_source, embedder)
    old, new = doc(source, "archive/thesis_plan.md"), doc(source, "current/thesis_plan.md")
    assert old.family == new.family
    assert new.is_latest and not old.is_latest


def test_the_same_name_with_a_different_title_in_two_folders_stays_apart(
    owner, vault, make_source, embedder
):
    vault.write("work/thesis_plan.md", LONG_NOTE.format(when="May"), mtime=at(2026, 1, 1))
    vault.write(
        "club/thesis_plan.md",
        LONG_NOTE.format(when="June").replace("# Thesis plan", "# Reading club thesis"),
        mtime=at(2026, 2, 1),
    )
    source = synced(owner, vault, make_source, embedder)
    work, club = doc(source, "work/thesis_plan.md"), doc(source, "club/thesis_plan.md")
    assert work.family != club.family
    assert work.is_latest and club.is_latest


def test_the_same_name_and_title_with_different_text_in_two_folders_stays_apart(
    owner, vault, make_source, embedder
):
    vault.write("work/thesis_plan.md", LONG_NOTE.format(when="May"), mtime=at(2026, 1, 1))
    vault.write(
        "club/thesis_plan.md",
        "# Thesis plan\n\nThe club reads one thesis a month and votes on the next one.\n",
        mtime=at(2026, 2, 1),
    )
    source = synced(owner, vault, make_source, embedder)
    assert doc(source, "work/thesis_plan.md").family != doc(source, "club/thesis_plan.md").family


# --- files that are their own family ------------------------------------------------


def test_an_unversioned_folder_makes_every_file_its_own_family(owner, vault, make_source, embedder):
    vault.write("private/diary/2026-08.md", "# August\n\nQuiet month, lots of reading.\n")
    vault.write("private/diary/2026-09.md", "# September\n\nStarted the new job.\n")
    vault.write("private/diary/mood_aug2026.md", "# Mood\n\nCalm.\n")
    vault.write("private/diary/mood_sep2026.md", "# Mood\n\nBusy.\n")
    vault.write("logs/mood_aug2026.md", "# Mood log\n\nTired.\n")
    vault.write("logs/mood_sep2026.md", "# Mood log\n\nRested.\n")
    source = synced(owner, vault, make_source, embedder, unversioned_dirs=["private/diary"])
    diary = [
        doc(source, p)
        for p in (
            "private/diary/2026-08.md",
            "private/diary/2026-09.md",
            "private/diary/mood_aug2026.md",
            "private/diary/mood_sep2026.md",
        )
    ]
    assert len({d.family for d in diary}) == 4
    assert all(d.is_latest for d in diary)
    # Outside the unversioned folder the same names are versions as usual.
    aug, sep = doc(source, "logs/mood_aug2026.md"), doc(source, "logs/mood_sep2026.md")
    assert aug.family == sep.family
    assert sep.is_latest and not aug.is_latest


def test_daily_notes_named_only_by_a_date_are_each_their_own_family(
    owner, vault, make_source, embedder
):
    vault.write("daily/2026-10-05.md", "# Monday\n\nDentist at nine.\n")
    vault.write("daily/2026-10-06.md", "# Tuesday\n\nGym after work.\n")
    vault.write("2026-10-05.md", "# Root daily\n\nCall the bank.\n")
    source = synced(owner, vault, make_source, embedder)
    documents = [
        doc(source, p) for p in ("daily/2026-10-05.md", "daily/2026-10-06.md", "2026-10-05.md")
    ]
    assert len({d.family for d in documents}) == 3
    assert all(d.is_latest for d in documents)
    assert documents[0].effective_date == date(2026, 10, 5)
    assert documents[0].date_source == "filename"


# --- dates ------------------------------------------------------------------------


def test_a_file_dated_only_by_its_mtime_is_weak_and_shown_undated(
    owner, vault, make_source, embedder
):
    vault.write("pantry.md", "# Pantry\n\nWe keep saffron in the blue tin.\n", mtime=at(2026, 4, 2))
    source = synced(owner, vault, make_source, embedder)
    document = doc(source, "pantry.md")
    assert document.date_source == "mtime-weak"
    assert document.effective_date == date(2026, 4, 2)
    assert document.shown_date is None
    results = search(user=owner, query="saffron blue tin", embedder=embedder).results
    assert results and results[0].path == "pantry.md"
    assert results[0].date is None
    assert results[0].date_source == "mtime-weak"


def test_a_dated_heading_refines_a_month_in_the_name(owner, vault, make_source, embedder):
    vault.write("standup_aug2026.md", "# Standup\n\n## August 18, 2026\n\nDemoed the parser.\n")
    vault.write("retro_aug2026.md", "# Retro\n\n## September 3, 2026\n\nLate write-up.\n")
    source = synced(owner, vault, make_source, embedder)
    standup = doc(source, "standup_aug2026.md")
    assert (standup.effective_date, standup.date_source) == (date(2026, 8, 18), "heading")
    # A heading in another month does not override the name.
    retro = doc(source, "retro_aug2026.md")
    assert (retro.effective_date, retro.date_source) == (date(2026, 8, 1), "filename")
    result = search(user=owner, query="demoed the parser", embedder=embedder).results[0]
    assert (result.date, result.date_source) == ("2026-08-18", "heading")


def test_a_frontmatter_date_dates_an_unnamed_note(owner, vault, make_source, embedder):
    vault.write("offer.md", "---\ndate: 2026-07-14\n---\n# Offer\n\nSigned the offer.\n")
    source = synced(owner, vault, make_source, embedder)
    document = doc(source, "offer.md")
    assert (document.effective_date, document.date_source) == (date(2026, 7, 14), "frontmatter")


# --- latest moves with the files ----------------------------------------------------

JUNE = "# Career plan\n\nBecome a staff engineer at Initech, learning Rust on weekends.\n"
AUGUST = "# Career plan\n\nApply to the Halvorsen robotics lab and visit their Oslo office.\n"
OCTOBER = "# Career plan\n\nMove into research science, studying probability at night.\n"


def test_latest_moves_to_a_newer_version_and_back_when_it_is_deleted(
    owner, vault, make_source, embedder
):
    vault.write("career_plan_jun2026.md", JUNE)
    source = synced(owner, vault, make_source, embedder)
    assert doc(source, "career_plan_jun2026.md").is_latest

    vault.write("career_plan_oct2026.md", OCTOBER)
    source_sync(source=source, embedder=embedder)
    june, october = doc(source, "career_plan_jun2026.md"), doc(source, "career_plan_oct2026.md")
    assert october.is_latest and not june.is_latest
    assert not june.chunks.filter(is_latest=True).exists()
    assert october.chunks.exists() and not october.chunks.filter(is_latest=False).exists()
    present = search(
        user=owner, query="staff engineer Initech Rust", mode="present", embedder=embedder
    )
    assert present.results[0].path == "career_plan_oct2026.md"
    assert [r.is_latest for r in present.results] == [True, False]

    vault.remove("career_plan_oct2026.md")
    source_sync(source=source, embedder=embedder)
    june = doc(source, "career_plan_jun2026.md")
    assert june.is_latest
    assert not june.chunks.filter(is_latest=False).exists()
    assert not Chunk.objects.filter(
        document__source=source, document__path__contains="oct"
    ).exists()
    present = search(
        user=owner, query="staff engineer Initech Rust", mode="present", embedder=embedder
    )
    assert [r.path for r in present.results] == ["career_plan_jun2026.md"]
    assert present.results[0].is_latest


# --- time modes over versions -------------------------------------------------------


@pytest.fixture
def career_plans(owner, vault, make_source, embedder):
    vault.write("career_plan_jun2026.md", JUNE)
    vault.write("career_plan_aug2026.md", AUGUST)
    vault.write("career_plan_oct2026.md", OCTOBER)
    vault.write("groceries.md", "# Groceries\n\nOat milk, lentils, saffron.\n")
    return synced(owner, vault, make_source, embedder)


def test_present_ranks_an_older_version_below_the_latest_even_for_its_exact_wording(
    owner, career_plans, embedder
):
    results = search(user=owner, query=JUNE, mode="present", limit=10, embedder=embedder).results
    assert results[0].path == "career_plan_oct2026.md" and results[0].is_latest
    older = [i for i, r in enumerate(results) if not r.is_latest]
    current = [i for i, r in enumerate(results) if r.is_latest]
    assert older and min(older) > max(current)  # every older passage after every current one
    june = next(r for r in results if r.path == "career_plan_jun2026.md")
    assert june.superseded_by == "career_plan_oct2026.md (2026-10-01)"


def test_latest_only_drops_older_versions(owner, career_plans, embedder):
    for mode in ("present", "lookup", "auto"):
        results = search(
            user=owner, query=JUNE, mode=mode, latest_only=True, embedder=embedder
        ).results
        assert results and all(r.is_latest for r in results)
        assert not any("Initech" in r.text for r in results)


def test_lookup_returns_an_older_version_that_matches_right_after_its_latest(
    owner, career_plans, embedder
):
    # Only the June version has these words; the October one joins above it.
    results = search(
        user=owner,
        query="a staff role at Initech, Rust on weekends",
        mode="lookup",
        embedder=embedder,
    ).results
    assert results[0].path == "career_plan_oct2026.md"
    assert results[0].is_latest and "version" in results[0].legs
    assert results[1].path == "career_plan_jun2026.md"
    assert "Initech" in results[1].text
    assert results[1].is_latest is False
    assert results[1].date == "2026-06-01"


def test_lookup_with_an_older_versions_exact_wording_still_puts_the_latest_first(
    owner, career_plans, embedder
):
    response = search(user=owner, query=JUNE, mode="lookup", embedder=embedder)
    assert response.mode == "lookup"
    assert response.results[0].path == "career_plan_oct2026.md"
    june = next(r for r in response.results if r.path == "career_plan_jun2026.md")
    assert "Initech" in june.text
    assert set(june.legs) == {"keyword", "semantic"}
    # Two passages per family in lookup mode: the latest and the best older one.
    assert [r.path for r in response.results].count("career_plan_aug2026.md") == 0


def test_auto_mode_with_current_wording_is_present(owner, career_plans, embedder):
    response = search(
        user=owner, query="what is my current plan about Initech and Rust", embedder=embedder
    )
    assert response.mode == "present"
    assert response.results[0].path == "career_plan_oct2026.md"
    assert all(not r.is_latest for r in response.results if r.path == "career_plan_jun2026.md")


def test_history_returns_every_version_of_the_family_oldest_first(owner, career_plans, embedder):
    # Only the August version has these words.
    response = search(
        user=owner,
        query="Halvorsen robotics lab Oslo office",
        mode="history",
        limit=5,
        embedder=embedder,
    )
    assert response.mode == "history"
    family = doc(career_plans, "career_plan_oct2026.md").family
    in_family = [r for r in response.results if r.family == family]
    assert [r.path for r in in_family] == [
        "career_plan_jun2026.md",
        "career_plan_aug2026.md",
        "career_plan_oct2026.md",
    ]
    assert [r.date for r in in_family] == ["2026-06-01", "2026-08-01", "2026-10-01"]
    assert [r.is_latest for r in in_family] == [False, False, True]


def test_auto_mode_with_change_wording_is_history(owner, career_plans, embedder):
    response = search(
        user=owner, query="how did my career plan change over time", embedder=embedder
    )
    assert response.mode == "history"
    paths = [r.path for r in response.results if r.path.startswith("career_plan")]
    assert paths == ["career_plan_jun2026.md", "career_plan_aug2026.md", "career_plan_oct2026.md"]


# --- logs: dated sections --------------------------------------------------------------

STANDUP_LOG = """# Parser migration log

## 2026-10-01

Status of the parser migration: blocked on code review by Priya.

## 2026-10-08

Status of the parser migration: review done, waiting for the staging deploy.

## 2026-10-15

Status of the parser migration: merged and deployed to production.
"""


def test_a_log_in_present_mode_puts_its_newest_section_first(owner, vault, make_source, embedder):
    vault.write("migration_log.md", STANDUP_LOG)
    source = synced(owner, vault, make_source, embedder)
    document = doc(source, "migration_log.md")
    assert (document.effective_date, document.date_source) == (date(2026, 10, 15), "section")

    query = "status of the parser migration"
    present = search(user=owner, query=query, mode="present", embedder=embedder).results
    assert present[0].section == "2026-10-15" and present[0].is_latest
    assert "merged and deployed" in present[0].text
    assert (present[0].date, present[0].date_source) == ("2026-10-15", "section")
    assert all(not r.is_latest for r in present[1:])
    latest_only = search(
        user=owner, query=query, mode="present", latest_only=True, embedder=embedder
    )
    assert [r.section for r in latest_only.results] == ["2026-10-15"]

    # The older sections are still there for a question that is not about now.
    lookup = search(
        user=owner, query="blocked on code review by Priya", mode="lookup", embedder=embedder
    )
    assert lookup.results[0].section == "2026-10-01"
    assert (lookup.results[0].date, lookup.results[0].date_source) == ("2026-10-01", "section")
    assert lookup.results[0].is_latest is False
    history = search(user=owner, query=query, mode="history", embedder=embedder).results
    dates = [r.date for r in history]
    assert len(dates) >= 2 and "2026-10-15" in dates
    assert dates == sorted(dates)


def test_a_note_without_other_versions_gives_two_passages_in_lookup_as_in_present(
    owner, vault, make_source, embedder
):
    # "One passage per family" in lookup mode is for sibling versions; a note
    # with no other versions keeps the usual two passages per document, the
    # same as it would in an unversioned folder or in present mode.
    vault.write(
        "boat.md",
        "# Boat\n\n## Engine\n\nThe boat engine oil is changed in May.\n\n"
        "## Hull\n\nThe boat hull is painted in May.\n",
    )
    synced(owner, vault, make_source, embedder)
    for mode in ("present", "lookup"):
        results = search(user=owner, query="boat in May", mode=mode, embedder=embedder).results
        assert sorted(r.section for r in results) == ["Engine", "Hull"], mode
