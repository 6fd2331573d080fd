"""Proposed changes as hunks a person accepts or rejects one by one.

Hunks come from difflib's grouped opcodes, not from parsing a text diff: each
group already carries exact line ranges on both sides, so applying any subset
is arithmetic, and the review the person sees and the change that is written
are built from the same structure and cannot disagree.

A hunk is one run of changed lines: changes with any unchanged line between
them are separate hunks (see `_split`). A hunk includes context lines where
there are some, so a side is rarely empty; that is why `kind` comes from the
opcode tags rather than from line counts, and why each hunk also carries the
spans (relative to its own lines) of the lines that really change, for the
review to tint only those.
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


def _split(group: list[tuple], context: int) -> list[list[tuple]]:
    """One run of changes per piece, as `git add -p`'s split does: difflib
    joins changes whose unchanged lines between them are fewer than twice
    the context, but each change stays its own hunk whenever any unchanged
    line separates it from the next. The lines between are shared out as
    context (the earlier piece's tail, the later one's head), never twice,
    so the pieces' old ranges do not overlap and any subset applies."""
    pieces: list[list[tuple]] = [[]]
    last = len(group) - 1
    for position, (tag, i1, i2, j1, j2) in enumerate(group):
        if tag != "equal" or position in (0, last):
            pieces[-1].append((tag, i1, i2, j1, j2))
            continue
        length = i2 - i1
        tail = min(context, length // 2)
        head = min(context, length - tail)
        if tail:
            pieces[-1].append((tag, i1, i1 + tail, j1, j1 + tail))
        pieces.append([("equal", i2 - head, i2, j2 - head, j2)])
    return pieces


def diff_hunks(old: str, new: str, *, context: int = CONTEXT_LINES) -> list[Hunk]:
    a, b = lines_of(old), lines_of(new)
    matcher = SequenceMatcher(None, a, b, autojunk=False)
    pieces = [
        piece for group in matcher.get_grouped_opcodes(context) for piece in _split(group, context)
    ]
    hunks = []
    for index, group in enumerate(pieces):
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
