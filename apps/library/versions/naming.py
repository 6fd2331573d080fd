"""Name-level facts about note files: dates, version and copy markers, family stems.

People keep several versions of one document side by side -- ``career_plan_jun2026``
and ``career_plan_oct2026``, ``resume_v1`` and ``resume_v2``, ``report draft`` and
``report final``, ``handoff (1)``, ``plan_backup``, ``notes - Copy``, ``notes 1``.
This module reads those names; grouping notes into version families and picking
the newest is done from these facts in `linking`.

Everything here is a pure function of a string: no Django, no database, no files.

Rules for the ambiguous cases (the tests pin each one down):

* Dates in file names are recognised only as whole tokens: the date must be
  bounded by a non-alphanumeric character (``_ - . space ( )`` ...) or the string
  edge, so ``v2026``, ``rev10``, ``chapter12`` and the middle of longer digit runs
  are never dates. Years must lie in 1990-2100 and the month/day must exist.
* Numeric dates are year-first (``2026-10-05``, ``2026-10``, ``20261005``) or the
  month-year form ``10-2026``. Day-first and month-first all-numeric dates
  (``05-10-2026``) are ambiguous, so they are not read at all -- and the ``10-2026``
  tail of such a run is not read as a month either.
* Month names (``oct``, ``October``, ``sept``) are read before the year
  (``oct2026``, ``Oct 2026``), and with a day: ``05_oct_2026`` (the two
  separators must agree, so ``chapter_1_oct2026`` keeps its ``1``) and
  ``oct_05_2026``. The year-first ``2026oct`` form is not read.
* A number right after a sequence word (``chapter``, ``part``, ``week`` ...) is a
  part number, never a day, a month or a copy number.
* When one name holds several dates, ``date_from_filename`` returns the most
  precise one, and among equally precise ones the last. Overlapping readings
  (``oct_2026-10-05``) are settled first: the more precise, then the longer wins.
* ``date_from_text`` returns the first date in text order; where two readings
  start at the same place the longer (more precise) one wins.
* Version rank: ``final`` anywhere wins (``FINAL_RANK``); otherwise the last
  explicit number (``v2``, ``version 2``, ``rev2``, ``r2``; ``v1.10`` ranks as
  1.010 so minor versions sort numerically); a ``draft``/``wip`` marker lowers a
  numbered version by half (``draft v2`` sits between ``v1`` and ``v2``) and
  alone ranks ``DRAFT_RANK``; no marker ranks 0.
* Copy markers: ``(n)``, ``Copy of X``, and ``copy``/``backup``/``bak``/``old``
  as the last word (after dates, versions and copy numbers are set aside) but
  never as the only word -- ``backup_strategy`` and ``old`` are names, not copies.
  A trailing space and a digit 1-9 (``notes 1``) is a copy number when what comes
  before holds a letter or a date and does not end with a sequence word; so
  ``untitled 2`` is a copy of ``untitled`` but ``chapter 1`` is chapter one.
  ``copy_number`` is the explicit number, 1 for an unnumbered copy, 0 for none.
* ``family_stem`` removes all of the above. Version and copy words are kept when
  removing them would leave no letter at all (``draft`` stays ``draft``, so the
  generic-name check still sees it); a name that is only a date becomes ``""``.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from apps.library.versions.dates import (
    DRAFT_RANK,
    FINAL_RANK,
    LB,
    LETTER,
    NO_MARKER_RANK,
    RB,
    DateMatch,
    VersionMarker,
    after_sequence_word,
    date_from_filename,
    date_from_text,
    filename_dates,
)

__all__ = [
    "DateMatch",
    "VersionMarker",
    "date_from_filename",
    "date_from_text",
    "family_stem",
    "is_copy_name",
    "is_generic_name",
    "version_marker",
]


# --- version and copy markers -----------------------------------------------------

# Version markers as whole tokens. Dates are blanked out before this runs, so
# "draft_2026" or "v1_oct2026" cannot lend their digits to a version.
_VERSION = re.compile(
    LB
    + r"""(?:
        (?P<final>final)[0-9]*                          # final, FINAL, final2
      | (?P<draft>draft|wip)(?:[-_. ]?(?P<dnum>[0-9]{1,3}))?   # draft, wip, draft 2
      | (?:v|ver|version|rev|revision)[-_. ]?             # v2, v 3, version_2, rev-1
        (?P<num>[0-9]{1,4})(?:\.(?P<minor>[0-9]{1,3}))?   # ... and v1.2
      | r(?P<rnum>[0-9]{1,4})                            # r3: only glued to its digits
    )"""
    + RB,
    re.IGNORECASE | re.VERBOSE,
)

# "(1)", "( 2 )": the browser / file-manager duplicate counter.
_PAREN_COUNTER = re.compile(r"\(\s*(?P<n>[1-9][0-9]{0,2})\s*\)")

# "Copy of notes" (older Windows and Google Drive): only at the very start.
_COPY_OF = re.compile(r"^[-_.\s]*copy[-_. ]+of" + RB, re.IGNORECASE)

# A space and one digit 1-9 ending the name: "notes 1", "untitled 2" (macOS and
# many editors). Exactly one space: "notes_1" numbers a part, not a copy.
_TRAILING_COUNTER = re.compile(r" (?P<n>[1-9])$")

# A copy word ending the name, with its optional number: "notes - Copy",
# "plan_backup", "plan_bak", "plan_old", "notes_copy_2". Brackets and blanks may
# follow because markers removed earlier leave them behind.
_COPY_WORD = re.compile(
    LB + r"(?:copy|backup|bak|old)(?:[-_. ]*(?P<n>[1-9][0-9]?))?" + RB + r"[-_.\s()\[\]]*$",
    re.IGNORECASE,
)


def _blank(text: str, start: int, end: int) -> str:
    """Replace a span with spaces, keeping every later index valid."""
    return text[:start] + " " * (end - start) + text[end:]


@dataclass(frozen=True)
class _Reading:
    marker: VersionMarker
    undated: str  # the name with its dates blanked
    bare: str  # the name with dates, versions and copy markers blanked
    unversioned: str  # the name with dates and copy markers blanked, versions kept


def _read(stem: str) -> _Reading:
    """Find and blank, in order: dates, copy counters, version markers, copy words.

    Order matters: dates first so their digits never look like versions or
    counters; versions before the trailing counter so "v 3" is version three.
    """
    text = stem.lower()

    undated = text
    for match in filename_dates(text):
        undated = _blank(undated, *match.span)

    work = undated
    copy_numbers: list[int] = []
    is_copy = False

    for match in _PAREN_COUNTER.finditer(work):
        is_copy = True
        copy_numbers.append(int(match.group("n")))
        work = _blank(work, *match.span())

    copy_of = _COPY_OF.search(work)
    if copy_of and LETTER.search(work[copy_of.end() :]):
        is_copy = True
        work = _blank(work, *copy_of.span())

    # The copy-only pass below reuses this state without touching versions.
    copy_state = (work, list(copy_numbers), is_copy)

    final = draft = False
    numbers: list[float] = []
    for match in _VERSION.finditer(work):
        if match.group("final"):
            final = True
        elif match.group("draft"):
            draft = True
            if match.group("dnum"):
                numbers.append(float(match.group("dnum")))
        elif match.group("num"):
            minor = match.group("minor")
            numbers.append(int(match.group("num")) + (int(minor) / 1000 if minor else 0.0))
        else:
            numbers.append(float(match.group("rnum")))
        work = _blank(work, *match.span())

    if final:
        rank = FINAL_RANK
    elif numbers:
        rank = numbers[-1] - (0.5 if draft else 0.0)
    elif draft:
        rank = DRAFT_RANK
    else:
        rank = NO_MARKER_RANK

    work, copy_numbers, is_copy = _strip_copy_tail(text, work, copy_numbers, is_copy)
    unversioned, _, _ = _strip_copy_tail(text, *copy_state)

    if is_copy and not copy_numbers:
        copy_numbers.append(1)
    marker = VersionMarker(
        rank=rank, is_copy=is_copy, copy_number=copy_numbers[0] if is_copy else 0
    )
    return _Reading(marker=marker, undated=undated, bare=work, unversioned=unversioned)


def _strip_copy_tail(
    text: str, work: str, copy_numbers: list[int], is_copy: bool
) -> tuple[str, list[int], bool]:
    """Blank the trailing " N" counter and trailing copy words; see module rules."""
    counter = _TRAILING_COUNTER.search(text)
    if counter and work[counter.start("n")] != " ":  # not already taken by a version
        head = text[: counter.start()]
        if (LETTER.search(head) or filename_dates(head)) and not after_sequence_word(
            work, counter.start()
        ):
            is_copy = True
            copy_numbers.append(int(counter.group("n")))
            work = _blank(work, *counter.span())

    # Peel copy words off the end ("plan backup old"), but never the first word.
    while (word := _COPY_WORD.search(work)) and LETTER.search(work[: word.start()]):
        is_copy = True
        if word.group("n"):
            copy_numbers.append(int(word.group("n")))
        work = _blank(work, *word.span())
    return work, copy_numbers, is_copy


def version_marker(stem: str) -> VersionMarker:
    """Rank and copy status of a file name (without extension); see module rules."""
    return _read(stem).marker


def is_copy_name(stem: str) -> bool:
    """True when the name marks a duplicate: ``(1)``, ``copy``, ``_backup``, ``notes 2``."""
    return version_marker(stem).is_copy


# --- family stems -----------------------------------------------------------------

_SEPARATORS = re.compile(r"[-_.\s]+")
# Bracket pairs emptied by marker removal: "notes (draft)" -> "notes ()".
_EMPTY_BRACKETS = re.compile(r"\(\s*\)|\[\s*\]|\{\s*\}")


def _normalise(text: str) -> str:
    text = _SEPARATORS.sub(" ", text)
    text = _EMPTY_BRACKETS.sub(" ", text)
    return _SEPARATORS.sub(" ", text).strip()


def family_stem(stem: str) -> str:
    """The name shared by all versions of one document.

    Lower-cased, with dates, version markers and copy markers removed and
    separators collapsed to single spaces. Unicode is NFC-normalised first so a
    name typed on macOS (NFD) matches the same name typed elsewhere. A name that
    is only a date gives ``""``.
    """
    reading = _read(unicodedata.normalize("NFC", stem))
    for candidate in (reading.bare, reading.unversioned, reading.undated):
        family = _normalise(candidate)
        if LETTER.search(family):
            return family
    return _normalise(reading.bare)


# Names unrelated notes commonly share, as family stems. They must never link
# notes across folders.
GENERIC_NAMES = frozenset(
    {
        "changelog",
        "draft",
        "home",
        "ideas",
        "inbox",
        "index",
        "journal",
        "log",
        "meeting note",
        "meeting notes",
        "new note",
        "note",
        "notes",
        "overview",
        "read me",
        "readme",
        "scratch",
        "scratchpad",
        "summary",
        "tasks",
        "to do",
        "todo",
        "todos",
        "untitled",
        "untitled document",
    }
)

# "untitled 12", "notes_3": a generic name numbered past the copy-counter range.
_TRAILING_NUMBER = re.compile(r" [0-9]+$")


def is_generic_name(stem: str) -> bool:
    """True for names unrelated notes share (index, readme, notes, untitled 3 ...).

    A name that is only a date (a daily note) is generic too: its family stem is
    empty and daily notes in different folders are unrelated.
    """
    family = _TRAILING_NUMBER.sub("", family_stem(stem))
    return family == "" or family in GENERIC_NAMES
