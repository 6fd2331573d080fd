"""Name-level facts about note files: dates, version and copy markers, family stems.

People keep several versions of one document side by side -- ``career_plan_jun2026``
and ``career_plan_oct2026``, ``resume_v1`` and ``resume_v2``, ``report draft`` and
``report final``, ``handoff (1)``, ``plan_backup``, ``notes - Copy``, ``notes 1``.
This module reads those names; grouping notes into version families and picking
the newest is done elsewhere from these facts.

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

import calendar
import datetime
import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "DRAFT_RANK",
    "FINAL_RANK",
    "GENERIC_NAMES",
    "NO_MARKER_RANK",
    "DateMatch",
    "VersionMarker",
    "date_from_filename",
    "date_from_text",
    "family_stem",
    "is_copy_name",
    "is_generic_name",
    "version_marker",
]

Precision = Literal["day", "month"]

MIN_YEAR = 1990
MAX_YEAR = 2100

DRAFT_RANK = -1.0
NO_MARKER_RANK = 0.0
FINAL_RANK = 1e6


@dataclass(frozen=True)
class DateMatch:
    """A date found in a name or a text."""

    value: datetime.date  # first day of the month when the day is unknown
    precision: Precision  # "day" | "month"
    span: tuple[int, int]  # where in the input string it matched


@dataclass(frozen=True)
class VersionMarker:
    """What a name says about its place among versions of one document."""

    rank: float  # orders undated versions: draft < none < v1 < v2 < final
    is_copy: bool  # a file-manager or hand-made duplicate (``(1)``, ``copy``, ``_bak``)
    copy_number: int  # the copy's number; 1 when unnumbered, 0 when not a copy


# --- building blocks ------------------------------------------------------------

# Token edges. "[^\W_]" is a Unicode letter or digit, so these say "not glued to a
# letter or digit": a date or marker must stand alone, but any punctuation
# (separators, brackets, commas) or the string edge may surround it.
_L = r"(?<![^\W_])"
_R = r"(?![^\W_])"

# The separators people put between the words of a file name.
_SEP = r"[-_. ]"

# Years are four ASCII digits; the 1990-2100 range is checked after matching.
# ASCII classes on purpose: "\d" would also take other scripts' digits.
_YEAR = r"(?P<y>[0-9]{4})"

# Month names, long or short, plus the common "sept". Longest spelling first
# inside each group so "october" is not cut to "oct".
_MONTH_NAME = (
    r"(?P<mon>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?"
    r"|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_MONTH_NUMBERS: dict[str, int] = {
    name: number
    for number, name in enumerate(
        ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"),
        start=1,
    )
}

# Ordinal suffixes on a day: "10th", "1st", "2nd", "3rd".
_ORDINAL = r"(?:st|nd|rd|th)?"

# Words after which a number counts parts of a work rather than days or copies:
# "chapter 1", "part_2_oct_2026", "week 3".
_SEQUENCE_WORDS = frozenset(
    {
        "act",
        "appendix",
        "book",
        "ch",
        "chap",
        "chapter",
        "day",
        "ep",
        "episode",
        "exercise",
        "grade",
        "issue",
        "lecture",
        "lesson",
        "level",
        "module",
        "no",
        "number",
        "page",
        "part",
        "phase",
        "problem",
        "pt",
        "q",
        "question",
        "round",
        "scene",
        "season",
        "sec",
        "section",
        "semester",
        "session",
        "sprint",
        "stage",
        "step",
        "task",
        "term",
        "track",
        "unit",
        "vol",
        "volume",
        "week",
        "wk",
        "year",
    }
)

# The last word before a position, skipping separators/blanks: for the
# sequence-word checks above.
_LAST_WORD = re.compile(r"([^\W\d_]+)[-_.\s]*$")

# Any Unicode letter.
_LETTER = re.compile(r"[^\W\d_]")

# A 1-2 digit number token and a separator right before a match: the match is
# then the tail of a day-first/month-first numeric date ("05-10-2026") whose
# order cannot be known, so it is not read as a month-year.
_NUMBER_BEFORE = re.compile(_L + r"[0-9]{1,2}" + _SEP + r"$")


def _make_date(year: int, month: int, day: int = 1) -> datetime.date | None:
    """The date, or None when it does not exist or falls outside 1990-2100."""
    if not (MIN_YEAR <= year <= MAX_YEAR and 1 <= month <= 12):
        return None
    if not 1 <= day <= calendar.monthrange(year, month)[1]:
        return None
    return datetime.date(year, month, day)


def _date_from_groups(match: re.Match[str]) -> datetime.date | None:
    groups = match.groupdict()
    if groups.get("m") is not None:
        month = int(groups["m"])
    else:
        month = _MONTH_NUMBERS[groups["mon"][:3].lower()]
    day = int(groups["d"]) if groups.get("d") is not None else 1
    return _make_date(int(groups["y"]), month, day)


def _after_sequence_word(text: str, position: int) -> bool:
    word = _LAST_WORD.search(text[:position])
    return word is not None and word.group(1).lower() in _SEQUENCE_WORDS


@dataclass(frozen=True)
class _DatePattern:
    regex: re.Pattern[str]
    precision: Precision
    # The match starts with a bare number (a day or a month): refuse it after a
    # sequence word ("chapter_10_2026") or another short number ("05-10-2026").
    number_first: bool = False


# --- dates in file names ----------------------------------------------------------

_FILENAME_PATTERNS: tuple[_DatePattern, ...] = (
    # 2026-10-05, 2026_10_05, 2026.10.05, 2026 10 05: one separator used twice,
    # so mixed runs like "2026-10_05" are not taken for a date.
    _DatePattern(
        re.compile(_L + _YEAR + r"(?P<s>[-_. ])(?P<m>[0-9]{2})(?P=s)(?P<d>[0-9]{2})" + _R),
        "day",
    ),
    # 20261005: only a standalone run of exactly eight digits (the edges refuse
    # longer runs; range checks refuse phone-number-like 20261399).
    _DatePattern(re.compile(_L + _YEAR + r"(?P<m>[0-9]{2})(?P<d>[0-9]{2})" + _R), "day"),
    # 2026-10, 2026_10, 2026.10 (no space: "2026 10" reads as two numbers). Not
    # when a two-digit day-like token follows: "2026-10-45" is a bad date, not
    # October 2026.
    _DatePattern(
        re.compile(_L + _YEAR + r"[-_.](?P<m>[0-9]{2})" + _R + r"(?![-_.][0-9]{2}" + _R + ")"),
        "month",
    ),
    # 10-2026, 10_2026, 10.2026: month then year, two-digit month.
    _DatePattern(re.compile(_L + r"(?P<m>[0-9]{2})[-_.]" + _YEAR + _R), "month", number_first=True),
    # oct2026, october2026, oct_2026, Oct 2026, october-2026, sept2026. The year
    # may be glued to the name: month names never end in a digit.
    _DatePattern(re.compile(_L + _MONTH_NAME + _SEP + r"?" + _YEAR + _R, re.IGNORECASE), "month"),
    # 05_oct_2026, 5 Oct 2026, 05oct2026, 5th-oct-2026: both separators the same,
    # so "chapter_1_oct2026" stays chapter one of October 2026.
    _DatePattern(
        re.compile(
            _L
            + r"(?P<d>[0-9]{1,2})"
            + _ORDINAL
            + r"(?P<s>[-_. ]?)"
            + _MONTH_NAME
            + r"(?P=s)"
            + _YEAR
            + _R,
            re.IGNORECASE,
        ),
        "day",
        number_first=True,
    ),
    # oct_05_2026, Oct 5 2026, Oct 5, 2026, oct-5th-2026.
    _DatePattern(
        re.compile(
            _L
            + _MONTH_NAME
            + r"(?P<s>[-_. ])(?P<d>[0-9]{1,2})"
            + _ORDINAL
            + r",?(?P=s)"
            + _YEAR
            + _R,
            re.IGNORECASE,
        ),
        "day",
    ),
)


def _span_len(match: DateMatch) -> int:
    return match.span[1] - match.span[0]


def _filename_dates(stem: str) -> list[DateMatch]:
    """Every valid, non-overlapping date reading of a file name, in string order."""
    found: list[DateMatch] = []
    for pattern in _FILENAME_PATTERNS:
        for match in pattern.regex.finditer(stem):
            start = match.start()
            if pattern.number_first and (
                _after_sequence_word(stem, start) or _NUMBER_BEFORE.search(stem[:start])
            ):
                continue
            value = _date_from_groups(match)
            if value is not None:
                found.append(DateMatch(value, pattern.precision, match.span()))
    # Overlapping readings of one run ("oct_2026-10-05" holds "oct_2026" and
    # "2026-10-05"): keep the more precise, then the longer, then the later.
    found.sort(key=lambda m: (m.precision == "day", _span_len(m), m.span[0]), reverse=True)
    kept: list[DateMatch] = []
    for candidate in found:
        if all(candidate.span[1] <= k.span[0] or k.span[1] <= candidate.span[0] for k in kept):
            kept.append(candidate)
    return sorted(kept, key=lambda m: m.span)


def date_from_filename(stem: str) -> DateMatch | None:
    """The date a file name (without extension) carries, or None.

    Among several dates: the most precise, and among equals the last.
    """
    dates = _filename_dates(stem)
    if not dates:
        return None
    return max(dates, key=lambda m: (m.precision == "day", m.span[0]))


# --- dates in note text -----------------------------------------------------------

# Text dates end at a non-digit rather than a non-alphanumeric so that ISO
# timestamps ("2026-08-19T10:00") still give their date.
_TEXT_PATTERNS: tuple[_DatePattern, ...] = (
    # ISO and its slash/dot cousins, year first: 2026-08-19, 2026/8/19.
    _DatePattern(
        re.compile(_L + _YEAR + r"(?P<s>[-/.])(?P<m>[0-9]{1,2})(?P=s)(?P<d>[0-9]{1,2})(?![0-9])"),
        "day",
    ),
    # October 10, 2026 / Oct. 10 2026 / August 10th, 2026. The whitespace after
    # the name keeps "Octopus" and "Mayor" out.
    _DatePattern(
        re.compile(
            _L
            + _MONTH_NAME
            + r"\.?\s+(?P<d>[0-9]{1,2})"
            + _ORDINAL
            + r",?\s+"
            + _YEAR
            + r"(?![0-9])",
            re.IGNORECASE,
        ),
        "day",
    ),
    # 10 October 2026 / 10 Oct 2026 / 10th of October, 2026.
    _DatePattern(
        re.compile(
            _L
            + r"(?P<d>[0-9]{1,2})"
            + _ORDINAL
            + r"\s+(?:of\s+)?"
            + _MONTH_NAME
            + r"\.?,?\s+"
            + _YEAR
            + r"(?![0-9])",
            re.IGNORECASE,
        ),
        "day",
    ),
    # October 2026 / Oct. 2026 / Sept, 2026.
    _DatePattern(
        re.compile(_L + _MONTH_NAME + r"\.?,?\s+" + _YEAR + r"(?![0-9])", re.IGNORECASE),
        "month",
    ),
)


def date_from_text(text: str) -> DateMatch | None:
    """The first date written in a heading or the opening lines of a note, or None."""
    best: DateMatch | None = None
    for pattern in _TEXT_PATTERNS:
        for match in pattern.regex.finditer(text):
            value = _date_from_groups(match)
            if value is None:
                continue
            candidate = DateMatch(value, pattern.precision, match.span())
            # Earliest start wins; at the same start the longer reading wins.
            if best is None or (candidate.span[0], -_span_len(candidate)) < (
                best.span[0],
                -_span_len(best),
            ):
                best = candidate
            break  # this pattern's later matches start later still
    return best


# --- version and copy markers -----------------------------------------------------

# Version markers as whole tokens. Dates are blanked out before this runs, so
# "draft_2026" or "v1_oct2026" cannot lend their digits to a version.
_VERSION = re.compile(
    _L
    + r"""(?:
        (?P<final>final)[0-9]*                          # final, FINAL, final2
      | (?P<draft>draft|wip)(?:[-_. ]?(?P<dnum>[0-9]{1,3}))?   # draft, wip, draft 2
      | (?:v|ver|version|rev|revision)[-_. ]?             # v2, v 3, version_2, rev-1
        (?P<num>[0-9]{1,4})(?:\.(?P<minor>[0-9]{1,3}))?   # ... and v1.2
      | r(?P<rnum>[0-9]{1,4})                            # r3: only glued to its digits
    )"""
    + _R,
    re.IGNORECASE | re.VERBOSE,
)

# "(1)", "( 2 )": the browser / file-manager duplicate counter.
_PAREN_COUNTER = re.compile(r"\(\s*(?P<n>[1-9][0-9]{0,2})\s*\)")

# "Copy of notes" (older Windows and Google Drive): only at the very start.
_COPY_OF = re.compile(r"^[-_.\s]*copy[-_. ]+of" + _R, re.IGNORECASE)

# A space and one digit 1-9 ending the name: "notes 1", "untitled 2" (macOS and
# many editors). Exactly one space: "notes_1" numbers a part, not a copy.
_TRAILING_COUNTER = re.compile(r" (?P<n>[1-9])$")

# A copy word ending the name, with its optional number: "notes - Copy",
# "plan_backup", "plan_bak", "plan_old", "notes_copy_2". Brackets and blanks may
# follow because markers removed earlier leave them behind.
_COPY_WORD = re.compile(
    _L + r"(?:copy|backup|bak|old)(?:[-_. ]*(?P<n>[1-9][0-9]?))?" + _R + r"[-_.\s()\[\]]*$",
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
    for match in _filename_dates(text):
        undated = _blank(undated, *match.span)

    work = undated
    copy_numbers: list[int] = []
    is_copy = False

    for match in _PAREN_COUNTER.finditer(work):
        is_copy = True
        copy_numbers.append(int(match.group("n")))
        work = _blank(work, *match.span())

    copy_of = _COPY_OF.search(work)
    if copy_of and _LETTER.search(work[copy_of.end() :]):
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
        if (_LETTER.search(head) or _filename_dates(head)) and not _after_sequence_word(
            work, counter.start()
        ):
            is_copy = True
            copy_numbers.append(int(counter.group("n")))
            work = _blank(work, *counter.span())

    # Peel copy words off the end ("plan backup old"), but never the first word.
    while (word := _COPY_WORD.search(work)) and _LETTER.search(work[: word.start()]):
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
        if _LETTER.search(family):
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
