"""Dates in note file names and note text: the date part of the name rules
(see `naming` for the whole set of rules, version and copy markers included)."""

from __future__ import annotations

import calendar
import datetime
import re
from dataclasses import dataclass
from typing import Literal

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
LB = r"(?<![^\W_])"
RB = r"(?![^\W_])"

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
LETTER = re.compile(r"[^\W\d_]")

# A 1-2 digit number token and a separator right before a match: the match is
# then the tail of a day-first/month-first numeric date ("05-10-2026") whose
# order cannot be known, so it is not read as a month-year.
_NUMBER_BEFORE = re.compile(LB + r"[0-9]{1,2}" + _SEP + r"$")


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


def after_sequence_word(text: str, position: int) -> bool:
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
        re.compile(LB + _YEAR + r"(?P<s>[-_. ])(?P<m>[0-9]{2})(?P=s)(?P<d>[0-9]{2})" + RB),
        "day",
    ),
    # 20261005: only a standalone run of exactly eight digits (the edges refuse
    # longer runs; range checks refuse phone-number-like 20261399).
    _DatePattern(re.compile(LB + _YEAR + r"(?P<m>[0-9]{2})(?P<d>[0-9]{2})" + RB), "day"),
    # 2026-10, 2026_10, 2026.10 (no space: "2026 10" reads as two numbers). Not
    # when a two-digit day-like token follows: "2026-10-45" is a bad date, not
    # October 2026.
    _DatePattern(
        re.compile(LB + _YEAR + r"[-_.](?P<m>[0-9]{2})" + RB + r"(?![-_.][0-9]{2}" + RB + ")"),
        "month",
    ),
    # 10-2026, 10_2026, 10.2026: month then year, two-digit month.
    _DatePattern(
        re.compile(LB + r"(?P<m>[0-9]{2})[-_.]" + _YEAR + RB),
        "month",
        number_first=True,
    ),
    # oct2026, october2026, oct_2026, Oct 2026, october-2026, sept2026. The year
    # may be glued to the name: month names never end in a digit.
    _DatePattern(
        re.compile(LB + _MONTH_NAME + _SEP + r"?" + _YEAR + RB, re.IGNORECASE),
        "month",
    ),
    # 05_oct_2026, 5 Oct 2026, 05oct2026, 5th-oct-2026: both separators the same,
    # so "chapter_1_oct2026" stays chapter one of October 2026.
    _DatePattern(
        re.compile(
            LB
            + r"(?P<d>[0-9]{1,2})"
            + _ORDINAL
            + r"(?P<s>[-_. ]?)"
            + _MONTH_NAME
            + r"(?P=s)"
            + _YEAR
            + RB,
            re.IGNORECASE,
        ),
        "day",
        number_first=True,
    ),
    # oct_05_2026, Oct 5 2026, Oct 5, 2026, oct-5th-2026.
    _DatePattern(
        re.compile(
            LB
            + _MONTH_NAME
            + r"(?P<s>[-_. ])(?P<d>[0-9]{1,2})"
            + _ORDINAL
            + r",?(?P=s)"
            + _YEAR
            + RB,
            re.IGNORECASE,
        ),
        "day",
    ),
)


def _span_len(match: DateMatch) -> int:
    return match.span[1] - match.span[0]


def filename_dates(stem: str) -> list[DateMatch]:
    """Every valid, non-overlapping date reading of a file name, in string order."""
    found: list[DateMatch] = []
    for pattern in _FILENAME_PATTERNS:
        for match in pattern.regex.finditer(stem):
            start = match.start()
            if pattern.number_first and (
                after_sequence_word(stem, start) or _NUMBER_BEFORE.search(stem[:start])
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
    dates = filename_dates(stem)
    if not dates:
        return None
    return max(dates, key=lambda m: (m.precision == "day", m.span[0]))


# --- dates in note text -----------------------------------------------------------

# Text dates end at a non-digit rather than a non-alphanumeric so that ISO
# timestamps ("2026-08-19T10:00") still give their date.
_TEXT_PATTERNS: tuple[_DatePattern, ...] = (
    # ISO and its slash/dot cousins, year first: 2026-08-19, 2026/8/19.
    _DatePattern(
        re.compile(LB + _YEAR + r"(?P<s>[-/.])(?P<m>[0-9]{1,2})(?P=s)(?P<d>[0-9]{1,2})(?![0-9])"),
        "day",
    ),
    # October 10, 2026 / Oct. 10 2026 / August 10th, 2026. The whitespace after
    # the name keeps "Octopus" and "Mayor" out.
    _DatePattern(
        re.compile(
            LB
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
            LB
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
        re.compile(LB + _MONTH_NAME + r"\.?,?\s+" + _YEAR + r"(?![0-9])", re.IGNORECASE),
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
