"""Version families and which member is latest.

A family is the set of files that are versions of one document: same folder
and same name once dates, version markers and copy markers are stripped
(`career_plan_jun2026.md`, `career_plan_oct2026.md`). Files in different
folders join a family only when the content shows they are the same document:
the same title and mostly the same text. Names that unrelated notes share
(`index.md`, `todo.md`) never link folders. Folders marked unversioned
(diaries, logs) make every file its own family.

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

from apps.library.ingest.naming import family_stem, is_generic_name, version_marker
from apps.library.ingest.walk import under

CROSS_FOLDER_MIN_OVERLAP = 0.6
_SHINGLE = 5


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


@dataclass
class Assignment:
    family: str
    version_rank: float
    is_latest: bool


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

    # Cross-folder joining: same stem, same title, high text overlap.
    candidates = [by_id[i] for i in cross_folder_candidates(members, unversioned_dirs)]
    for i, first in enumerate(candidates):
        for second in candidates[i + 1 :]:
            if parent[first.id] == parent[second.id]:
                continue
            if family_stem(_stem(first.path)) != family_stem(_stem(second.path)):
                continue
            if not first.title or first.title.casefold() != second.title.casefold():
                continue
            if overlap(first.text, second.text) >= CROSS_FOLDER_MIN_OVERLAP:
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
        for m in group:
            marker = version_marker(_stem(m.path))
            result[m.id] = Assignment(
                family=family, version_rank=marker.rank, is_latest=m is ranked[-1]
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
