"""Ingest time: version families and which member is latest (run by sync).

A family is the set of files that are versions of one document: same folder
and same name once dates, version markers and copy markers are stripped
(`career_plan_jun2026.md`, `career_plan_oct2026.md`). Files in different
folders of one source join a family only when the content shows they are the
same document:

- the same title and mostly the same text (a copy kept in two places), or
- a note moved (or copied) into another folder and updated there: the same
  name once stripped, a title that says the same (once dates and version
  markers are stripped, one title's words contain the other's), at least half
  of the shorter note's content words in the other (`MOVED_MIN_CONTAINMENT`),
  and one of them dated later than the other (file name, `date:` key, dated
  heading or, weakest, file mtime). The later one is the later version.
- a note moved and largely rewritten: when both carry explicit dates (file
  name, `date:` key, dated headings; not file times) and they differ, the
  name and the title, once dates are stripped, stand in for content overlap
  ("Plan — March 2026" at the root, "Plan — September 2026" in `plans/`):
  the titles must be the same words and the notes must still share a little
  vocabulary (`IDENTITY_MIN_CONTAINMENT`), so two unrelated notes that
  happen to share a name do not join.

Files of one folder with the same name but different extensions
(`images.odt`, `images.pdf`) are one family only with a sign that they are
one document: mostly the same content words, or explicit, different dates
with titles that agree (a draft in Word, the final as PDF).

Names that unrelated notes share (`index.md`, `todo.md`, `README.md`) never
link folders. Folders marked unversioned (diaries, logs) make every file its
own family.

A version that could not be read (a failed parse) keeps its place in the
order (`position`) but never becomes latest: the newest readable version is
latest, and search says that a newer one failed.

Dates come before duplicates: two versions can be 95% identical with one
changed number, and collapsing them would throw the newer fact away. So only
byte-identical files are merged (in sync); near-duplicates stay versions.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from pathlib import PurePosixPath

from apps.library.paths import under
from apps.library.versions.naming import family_stem, is_generic_name, version_marker

CROSS_FOLDER_MIN_OVERLAP = 0.6
MOVED_MIN_CONTAINMENT = 0.5
# A moved note rewritten between two explicitly dated versions keeps its
# subject's words even when few sentences survive.
IDENTITY_MIN_CONTAINMENT = 0.1
_SHINGLE = 5
# Words too common to say two notes are about the same thing.
_COMMON = frozenset(
    """the and are was were for from had has have how its our that their them then there
    these they this was what when where which who why will with would you your about
    into than any all also just should not but can could did does been""".split()  # noqa: SIM905
)


@dataclass
class Member:
    """What family assignment needs to know about one document."""

    id: int
    path: str
    title: str
    effective_date: date | None
    mtime_ns: int
    date_is_weak: bool = False  # the date is only the file's mtime
    url: str = ""  # web pages and papers: fetched again, a new version of the same family
    text: str = ""  # loaded only for cross-folder candidates
    readable: bool = True  # False: its parse failed; it can never be the latest


@dataclass
class Assignment:
    family: str
    version_rank: float
    is_latest: bool
    position: int = 0  # 0 for the oldest member of the family


def _stem(path: str) -> str:
    return PurePosixPath(path).stem


def _folder(path: str) -> str:
    return str(PurePosixPath(path).parent)


def base_family(path: str, unversioned_dirs: list[str]) -> str:
    """The family key from the path alone; a unique key means "its own family"."""
    stem = family_stem(_stem(path))
    if not stem or under(path, unversioned_dirs):
        return f"file:{path}"
    return f"{_folder(path)}/{stem}"


def _shingles(text: str) -> set[tuple[str, ...]]:
    words = re.findall(r"\w+", text.lower())
    return {tuple(words[i : i + _SHINGLE]) for i in range(max(1, len(words) - _SHINGLE + 1))}


def overlap(a: str, b: str) -> float:
    first, second = _shingles(a), _shingles(b)
    if not first or not second:
        return 0.0
    return len(first & second) / len(first | second)


def _content_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[^\W\d_]{3,}", text.lower()) if w not in _COMMON}


def containment(a: str, b: str) -> float:
    """Share of the shorter note's content words that the other note also has:
    an updated note keeps most of its vocabulary even when every sentence changed."""
    first, second = _content_words(a), _content_words(b)
    if not first or not second:
        return 0.0
    return len(first & second) / min(len(first), len(second))


def _dated_apart(first: Member, second: Member) -> bool:
    """One of the two is dated later than the other: real dates differ, or
    both are dated only by file times and those differ."""
    if not first.date_is_weak and not second.date_is_weak:
        return first.effective_date != second.effective_date
    if first.date_is_weak and second.date_is_weak:
        return first.mtime_ns != second.mtime_ns
    return True  # a real date against a file time: the real date is the later one's


def _title_words(title: str) -> set[str]:
    return set(re.findall(r"[^\W_]+", family_stem(title)))


def _titles_agree(first: str, second: str) -> bool:
    """Titles that say the same once dates and version markers are stripped
    ("Care plan — May 2026" and "Care plan — September 2026"); an update may
    add words ("Damp in the back bedroom — update")."""
    a, b = _title_words(first), _title_words(second)
    return not a or not b or a <= b or b <= a


def _explicitly_dated_apart(first: Member, second: Member) -> bool:
    return (
        not first.date_is_weak
        and not second.date_is_weak
        and first.effective_date is not None
        and second.effective_date is not None
        and first.effective_date != second.effective_date
    )


def _same_identity(first: Member, second: Member) -> bool:
    """The same stripped name (the caller's) and the same title words once
    dates and version markers are stripped, both dated explicitly and apart."""
    a, b = _title_words(first.title), _title_words(second.title)
    return bool(a) and a == b and _explicitly_dated_apart(first, second)


def same_document(first: Member, second: Member) -> bool:
    """Two files in different folders with the same stripped name: the same
    document (a copy, a move followed by an update, or a dated rewrite)?"""
    if not first.readable or not second.readable:
        return False
    same_title = bool(first.title) and first.title.casefold() == second.title.casefold()
    if same_title and overlap(first.text, second.text) >= CROSS_FOLDER_MIN_OVERLAP:
        return True
    shared = containment(first.text, second.text)
    if (
        _dated_apart(first, second)
        and _titles_agree(first.title, second.title)
        and shared >= MOVED_MIN_CONTAINMENT
    ):
        return True
    return _same_identity(first, second) and shared >= IDENTITY_MIN_CONTAINMENT


def same_document_in_two_formats(first: Member, second: Member) -> bool:
    """`plan.docx` and `plan.pdf` in one folder: one document? Mostly the same
    content words, or explicit, different dates with titles that agree."""
    if not first.readable or not second.readable:
        return True  # a failed parse gives no evidence either way: keep the name's word
    if containment(first.text, second.text) >= MOVED_MIN_CONTAINMENT:
        return True
    return _explicitly_dated_apart(first, second) and _titles_agree(first.title, second.title)


def _suffix(path: str) -> str:
    return PurePosixPath(path).suffix.lower()


def mixed_format_candidates(members: Iterable[Member], unversioned_dirs: list[str]) -> set[int]:
    """Ids of members whose family (by path) holds files of more than one
    extension: worth a content check before they count as one document."""
    suffixes: dict[str, set[str]] = defaultdict(set)
    ids: dict[str, list[int]] = defaultdict(list)
    for m in members:
        if m.url:
            continue
        key = base_family(m.path, unversioned_dirs)
        suffixes[key].add(_suffix(m.path))
        ids[key].append(m.id)
    return {i for key, s in suffixes.items() if len(s) > 1 for i in ids[key]}


def _split_formats(members: list[Member], parent: dict[int, str], candidates: set[int]) -> None:
    """Give each extension of a mixed family its own key, then join those
    that show they are one document."""
    groups: dict[str, dict[str, list[Member]]] = defaultdict(lambda: defaultdict(list))
    for m in members:
        if m.id in candidates:
            groups[parent[m.id]][_suffix(m.path)].append(m)
    for family, by_suffix in groups.items():
        keys = {suffix: f"{family}{suffix}" for suffix in by_suffix}
        for suffix, group in by_suffix.items():
            for m in group:
                parent[m.id] = keys[suffix]
        suffixes = sorted(by_suffix)
        for i, first in enumerate(suffixes):
            for second in suffixes[i + 1 :]:
                if keys[first] == keys[second]:
                    continue
                if any(
                    same_document_in_two_formats(a, b)
                    for a in by_suffix[first]
                    for b in by_suffix[second]
                ):
                    old, new = keys[second], keys[first]
                    for suffix, key in keys.items():
                        if key == old:
                            keys[suffix] = new
                    for m in (*by_suffix[first], *by_suffix[second]):
                        parent[m.id] = new
        for suffix, group in by_suffix.items():
            for m in group:
                parent[m.id] = keys[suffix]
        # The first extension's family keeps the plain key: a family that was
        # one all along keeps its name.
        first_key = keys[suffixes[0]]
        if first_key != family:
            for m in members:
                if parent.get(m.id) == first_key:
                    parent[m.id] = family


def cross_folder_candidates(members: Iterable[Member], unversioned_dirs: list[str]) -> set[int]:
    """Ids of members whose family stem also occurs in another folder (worth a content check)."""
    folders: dict[str, set[str]] = defaultdict(set)
    ids: dict[str, list[int]] = defaultdict(list)
    for m in members:
        stem = family_stem(_stem(m.path))
        if m.url or not stem or is_generic_name(_stem(m.path)) or under(m.path, unversioned_dirs):
            continue
        folders[stem].add(_folder(m.path))
        ids[stem].append(m.id)
    return {i for stem, f in folders.items() if len(f) > 1 for i in ids[stem]}


def assign(members: list[Member], unversioned_dirs: list[str]) -> dict[int, Assignment]:
    """Family, version rank and latest flag for every member of one source."""
    parent = {
        m.id: f"url:{m.url}" if m.url else base_family(m.path, unversioned_dirs) for m in members
    }
    by_id = {m.id: m for m in members}
    _split_formats(members, parent, mixed_format_candidates(members, unversioned_dirs))

    # Cross-folder joining: same stem, and the content says it is the same document.
    candidates = [by_id[i] for i in cross_folder_candidates(members, unversioned_dirs)]
    for i, first in enumerate(candidates):
        for second in candidates[i + 1 :]:
            if parent[first.id] == parent[second.id]:
                continue
            if family_stem(_stem(first.path)) != family_stem(_stem(second.path)):
                continue
            if _folder(first.path) == _folder(second.path):
                continue
            if same_document(first, second):
                old, new = parent[second.id], parent[first.id]
                for key, value in parent.items():
                    if value == old:
                        parent[key] = new

    families: dict[str, list[Member]] = defaultdict(list)
    for m in members:
        families[parent[m.id]].append(m)

    result: dict[int, Assignment] = {}
    for family, group in families.items():
        ranked = sorted(group, key=_version_order)
        readable = [m for m in ranked if m.readable]
        latest = readable[-1] if readable else ranked[-1]
        for position, m in enumerate(ranked):
            marker = version_marker(_stem(m.path))
            result[m.id] = Assignment(
                family=family, version_rank=marker.rank, is_latest=m is latest, position=position
            )
    return result


def _version_order(member: Member) -> tuple:
    """Oldest first. A real date decides (from the name, frontmatter or a
    heading); a file dated only by its mtime sorts before every dated one.
    Then the version marker (draft < v1 < v2 < final): a marker is what the
    person wrote, an mtime is what an editor or a copy happened to leave. An
    original beats its copy; the mtime breaks what is left."""
    marker = version_marker(_stem(member.path))
    strong = None if member.date_is_weak else member.effective_date
    return (
        strong or date.min,
        marker.rank,
        0 if marker.is_copy else 1,
        member.mtime_ns,
        member.path,
    )
