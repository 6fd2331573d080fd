"""Proposed changes as hunks a person accepts or rejects one by one.

Hunks come from difflib's grouped opcodes, not from parsing a text diff: each
group already carries exact line ranges on both sides, so applying any subset
is arithmetic, and the review the person sees and the change that is written
are built from the same structure and cannot disagree.

A group includes context lines on both sides, so neither side is ever empty;
that is why `kind` comes from the opcode tags rather than from line counts,
and why each hunk also carries the spans (relative to its own lines) of the
lines that really change, for the review to tint only those.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from difflib import SequenceMatcher

CONTEXT_LINES = 3


@dataclass(frozen=True)
class Hunk:
    index: int
    kind: str  # "add" | "remove" | "replace"
    old_start: int  # line offsets into the old text, end exclusive
    old_end: int
    new_start: int
    new_end: int
    old_lines: list[str]
    new_lines: list[str]
    old_spans: list[tuple[int, int]]  # changed lines, relative to old_start
    new_spans: list[tuple[int, int]]

    def as_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> Hunk:
        return cls(
            **{
                **data,
                "old_spans": [tuple(span) for span in data["old_spans"]],
                "new_spans": [tuple(span) for span in data["new_spans"]],
            }
        )


def lines_of(text: str) -> list[str]:
    # Line ends stay on the lines, so joining them gives the text back exactly
    # (including a missing final newline).
    return text.splitlines(keepends=True)


def _kind(tags: set[str]) -> str:
    if tags == {"insert"}:
        return "add"
    if tags == {"delete"}:
        return "remove"
    return "replace"


def diff_hunks(old: str, new: str, *, context: int = CONTEXT_LINES) -> list[Hunk]:
    a, b = lines_of(old), lines_of(new)
    matcher = SequenceMatcher(None, a, b, autojunk=False)
    hunks = []
    for index, group in enumerate(matcher.get_grouped_opcodes(context)):
        old_start, new_start = group[0][1], group[0][3]
        old_end, new_end = group[-1][2], group[-1][4]
        changes = [op for op in group if op[0] != "equal"]
        hunks.append(
            Hunk(
                index=index,
                kind=_kind({op[0] for op in changes}),
                old_start=old_start,
                old_end=old_end,
                new_start=new_start,
                new_end=new_end,
                old_lines=a[old_start:old_end],
                new_lines=b[new_start:new_end],
                old_spans=[
                    (i1 - old_start, i2 - old_start) for _, i1, i2, _, _ in changes if i2 > i1
                ],
                new_spans=[
                    (j1 - new_start, j2 - new_start) for _, _, _, j1, j2 in changes if j2 > j1
                ],
            )
        )
    return hunks


def apply_hunks(old: str, hunks: list[Hunk], accepted: set[int]) -> str:
    """The old text with the accepted hunks taken from the new side."""
    a = lines_of(old)
    out: list[str] = []
    position = 0
    for hunk in sorted(hunks, key=lambda h: h.old_start):
        if hunk.old_start < position or a[hunk.old_start : hunk.old_end] != hunk.old_lines:
            raise ValueError("the hunks do not fit this text")
        out.extend(a[position : hunk.old_start])
        out.extend(hunk.new_lines if hunk.index in accepted else hunk.old_lines)
        position = hunk.old_end
    out.extend(a[position:])
    return "".join(out)
