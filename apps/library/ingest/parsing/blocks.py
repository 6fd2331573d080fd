"""Obsidian block ids (`The boiler is serviced in October. ^b15695`) kept as
anchors, never as words.

A block id names the paragraph or list item it ends (or, on a line of its
own, the block above it); other notes link to it (`[[Note#^b15695]]`) or embed
it (`![[Note#^b15695]]`). The id must not reach a passage's text, the keyword
index, the embeddings or a citation, yet the document page needs it as an
anchor and a link to it needs its place in the linking note's text. So the
Markdown parser writes private-use markers into the text it chunks: an anchor
marker at the start of the block the id names, and a pair of link markers
around the words a block link reads as. `unmark` takes each passage's markers
out again, leaving the plain text (exactly what the index stores) and where
the markers stood (`ChunkDraft.anchors`, `ChunkDraft.links`), which the page
(apps.library.blocklinks) and the embeds (apps.library.ingest.embeds) read.

Only Obsidian's own id characters (letters, digits, `-`) make a block id;
`^a"b<script>` is text like any other. Code, fenced or inline, holds no block ids.
"""

from __future__ import annotations

import re
from urllib.parse import quote, unquote

from apps.library.ingest.parsing.types import BlockLink

ANCHOR_OPEN, ANCHOR_CLOSE = "\ue000", "\ue001"
LINK_OPEN, LINK_MID, LINK_CLOSE = "\ue002", "\ue003", "\ue004"
MARKER_CHARS = ANCHOR_OPEN + ANCHOR_CLOSE + LINK_OPEN + LINK_MID + LINK_CLOSE
_STRAY = str.maketrans("", "", MARKER_CHARS)

MAX_ID_CHARS = 64
BLOCK_ID = re.compile(rf"[A-Za-z0-9][A-Za-z0-9-]{{0,{MAX_ID_CHARS - 1}}}")
MAX_BLOCK_LINES = 200  # how far up a block's first line is looked for
# A block id ends its line (`Some text ^b15695`) or stands alone on it.
_ID_CHARS = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*")
_QUOTE_PREFIX = re.compile(r"^[ \t]*(?:>[ \t]?)*")
_HEADING = re.compile(r"^#{1,6}[ \t]")
# What comes before a block's own words on its first line: indentation,
# quote markers, a list marker and a task box.
_LINE_PREFIX = re.compile(r"^[ \t]*(?:>[ \t]?)*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+(?:\[.\][ \t]+)?)?")
_LIST_ITEM = re.compile(r"^[ \t]*(?:>[ \t]?)*(?:[-*+]|\d{1,9}[.)])[ \t]+")
_MARKER = re.compile(
    f"{ANCHOR_OPEN}([^{MARKER_CHARS}]*){ANCHOR_CLOSE}"
    f"|{LINK_OPEN}([^{MARKER_CHARS}]*){LINK_MID}"
    f"|{LINK_CLOSE}"
)


def without_stray_markers(text: str) -> str:
    """The note's own text can hold no markers: those characters are dropped."""
    return text.translate(_STRAY)


def strip_marks(text: str) -> str:
    """Marked text as plain text (a heading's words, tag and acronym text)."""
    return unmark(text)[0]


def is_block_id(value: str) -> bool:
    return bool(BLOCK_ID.fullmatch(value))


def link_marker(target: str, block: str, shown: str) -> str:
    """The words of `[[target#^block|shown]]` wrapped in link markers (the
    target quoted so the opening marker holds no space a chunk could be cut at)."""
    return f"{LINK_OPEN}{quote(target.strip())}#{block}{LINK_MID}{shown}{LINK_CLOSE}"


def _anchor(block: str) -> str:
    return f"{ANCHOR_OPEN}{block}{ANCHOR_CLOSE}"


def _block_start(lines: list[str], last: int, *, whole: bool) -> int:
    """The first line of the block that ends at `last`: its paragraph or list
    item, or (`whole`, for an id on a line of its own) the whole run of lines
    down to it, a list or table included. Never more than MAX_BLOCK_LINES up."""
    start = last
    for _ in range(MAX_BLOCK_LINES):
        if start == 0 or (not whole and _LIST_ITEM.match(lines[start])):
            break
        above = lines[start - 1]
        if not above.strip() or _HEADING.match(above):
            break
        start -= 1
    return start


def _insert_anchor(lines: list[str], at: int, block: str, *, whole: bool) -> int:
    """Put the anchor marker on the block's first line; returns the lines added."""
    line = lines[at]
    prefix = _LINE_PREFIX.match(line).end()
    quoted = _QUOTE_PREFIX.match(line).end()
    if line[quoted:].startswith("|") or (whole and _LIST_ITEM.match(line)):
        # Before a table row the marker would make the row's first cell, and
        # after a list's first marker it would name that item alone: it goes
        # on a line of its own just above.
        lines.insert(at, line[:quoted] + _anchor(block))
        return 1
    if line[prefix:].startswith("[!"):
        # A callout's first line must stay one to be read as a callout: the
        # anchor goes on its content's first line.
        if at + 1 < len(lines) and lines[at + 1].lstrip().startswith(">"):
            return _insert_anchor(lines, at + 1, block, whole=False)
        return 0
    lines[at] = line[:prefix] + _anchor(block) + line[prefix:]
    return 0


def _trailing_id(line: str) -> tuple[str, str] | None:
    """(the line's words, the block id) when the line ends with ` ^id`."""
    if "^" not in line:
        return None
    words, _, block = line.rpartition("^")
    block = block.rstrip(" \t")
    if not _ID_CHARS.fullmatch(block) or (words and words[-1] not in " \t"):
        return None
    return words.rstrip(" \t"), block


def mark_block_ids(segment: str) -> str:
    """Each block id of a (code-free) stretch of Markdown becomes an anchor
    marker at the start of the block it names; an id on a heading, or on a
    line of its own with no block above, is dropped."""
    lines = segment.split("\n")
    index = 0
    while index < len(lines):
        found = _trailing_id(lines[index])
        if found is None:
            index += 1
            continue
        words, block = found
        lines[index] = words
        if _HEADING.match(words) or len(block) > MAX_ID_CHARS:
            index += 1
            continue
        if _LINE_PREFIX.match(words).end() < len(words):
            start = _block_start(lines, index, whole=False)
            index += 1 + _insert_anchor(lines, start, block, whole=False)
            continue
        # `^id` alone on its line names the block just above it.
        above = index - 1
        while above >= 0 and not lines[above].strip():
            above -= 1
        if above >= 0 and not _HEADING.match(lines[above]):
            start = _block_start(lines, above, whole=True)
            index += _insert_anchor(lines, start, block, whole=True)
        index += 1
    return "\n".join(lines)


def unmark(piece: str) -> tuple[str, dict[str, int], list[BlockLink]]:
    """A passage's plain text, its anchors (block id → offset in that text)
    and its block links. A link cut in two by the chunking is left as words."""
    out: list[str] = []
    length = 0
    last = 0
    anchors: dict[str, int] = {}
    links: list[BlockLink] = []
    open_link: tuple[int, str, str] | None = None
    for match in _MARKER.finditer(piece):
        out.append(piece[last : match.start()])
        length += match.start() - last
        last = match.end()
        if match.group(1) is not None:
            if is_block_id(match.group(1)):
                anchors.setdefault(match.group(1), length)
        elif match.group(2) is not None:
            target, _, block = match.group(2).rpartition("#")
            open_link = (length, unquote(target), block) if is_block_id(block) else None
        elif open_link is not None:
            start, target, block = open_link
            if length > start:
                links.append(BlockLink(start=start, end=length, target=target, block=block))
            open_link = None
    out.append(piece[last:])
    return "".join(out), anchors, links


def block_text(text: str, offset: int) -> str:
    """The words of the block whose anchor is at `offset` of a passage: to the
    end of its paragraph, or of its list item."""
    rest = text[offset:].lstrip("\n")
    rest = rest.split("\n\n", 1)[0]
    line_start = text.rfind("\n", 0, offset) + 1
    if _LIST_ITEM.match(text[line_start:offset]):
        lines = rest.split("\n")
        kept = [lines[0]]
        for line in lines[1:]:
            if _LIST_ITEM.match(line) or not line.startswith((" ", "\t")):
                break
            kept.append(line)
        rest = "\n".join(kept)
    return rest.strip()
