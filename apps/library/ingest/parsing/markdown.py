"""Markdown notes (Obsidian-flavoured) → heading-aware chunks.

A note is split on its headings; each section is packed into chunks that carry
the section's breadcrumb ("Project Statuses › PixelNet"). Obsidian syntax is
turned into the text a reader would see rather than dropped: `[[Note|alias]]`
reads "alias", a callout `> [!note] Title` reads "Note — Title" above its
content, block ids (`^abc123`) leave the words but stay as anchors
(`ChunkDraft.anchors`, and `ChunkDraft.links` for links to blocks: see
parsing/blocks.py). Code, fenced or inline, is left exactly as written:
`` `[[x]]` `` is code about links, not a link, and holds no tags. An embed of
another note (`![[Note]]`, `![[Note#Heading]]`, `![[Note#^id]]`) is listed in
`ParsedDocument.embeds` and reads "[embedded: Note › Heading]" where it
stands; the sync pulls the embedded note's passages in after it (the parser
sees one file only). An image or other file embed stays a link.
Headings that carry a date date the sections under them; a note with two or
more dated headings is a log, and its newest section is what "now" means.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from pathlib import PurePosixPath

from apps.library.ingest.parsing import blocks
from apps.library.ingest.parsing.chunking import pack_text
from apps.library.ingest.parsing.frontmatter import parse_frontmatter
from apps.library.ingest.parsing.types import ChunkDraft, ParsedDocument
from apps.library.versions.naming import date_from_text

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_COMMENT = re.compile(r"%%.*?%%", re.S)
_EMBED = re.compile(r"!\[\[([^\]|#]+)(?:#([^\]|]+))?(?:\|[^\]]*)?\]\]")
_WIKILINK = re.compile(r"\[\[([^\]|#]*)(?:#([^\]|]+))?(?:\|([^\]]+))?\]\]")
_HIGHLIGHT = re.compile(r"==(?=\S)(.+?)(?<=\S)==")
# `> [!note] Title`, `> [!my-type]- Folded`, and nested (`> > [!tip]`).
_CALLOUT = re.compile(r"^(\s*>\s?)\[!([\w-]+)\][+-]?[ \t]*(.*)$")
_CALLOUT_ANYWHERE = re.compile(r"^(\s*>[\s>]*)\[!([\w-]+)\][+-]?[ \t]*(.*)$", re.M)
_QUOTED = re.compile(r"^\s*>\s?")
# A block id ends its line (`Some text ^b15695`) or stands alone on it.
_BLOCK_ID = re.compile(r"(?:[ \t]+|^)\^[A-Za-z0-9][A-Za-z0-9-]*[ \t]*$", re.M)
_INLINE_TAG = re.compile(r"(?<![\w#&/\\])#([A-Za-z_][\w/-]*)")
# Inline code: a run of backticks, then anything up to the same run (not
# across a blank line, which ends a paragraph and so any code span in it).
_INLINE_CODE = re.compile(r"(?<!`)(`+)(?!`)((?:(?!\n[ \t]*\n).)+?)(?<!`)\1(?!`)", re.S)
_PLACEHOLDER = re.compile(r"\x00(\d+)\x00")
# Not tags: links (`[[#Heading]]`, `[x](#anchor)`), HTML (`<span style="color:#f00">`), URLs.
_NOT_TAG_TEXT = re.compile(r"\[\[.*?\]\]|\]\([^)]*\)|<[^>\n]*>|\S+://\S+")
# CSS colours (`#ff0000`, `#fff`): hex of a colour's length with a digit, or one letter repeated.
_HEX_COLOUR = re.compile(r"[0-9a-f]{3}|[0-9a-f]{4}|[0-9a-f]{6}|[0-9a-f]{8}")
_NOTE_SUFFIXES = ("", ".md", ".markdown")
# "Extended Project Qualification (EPQ)": the words before an all-capitals
# bracket whose initials spell it define an acronym the note then uses alone.
_ACRONYM = re.compile(r"((?:[A-Za-z][\w'-]*[ \t]+){1,8})\(([A-Z][A-Za-z]?[A-Z]{1,6}s?)\)")
_ACRONYM_SMALL_WORDS = frozenset({"of", "and", "for", "the", "in", "on", "to", "a", "an", "&"})
MAX_ACRONYMS = 10
_PRIVATE_MARK = re.compile(r"\s*<!--\s*private\s*-->\s*", re.I)

BREADCRUMB_SEPARATOR = " › "
DATED_HEADINGS_FOR_A_LOG = 2
FIRST_HEADINGS_FOR_DATE = 3
MAX_EMBEDS = 20  # notes pulled into one note; more stay links


@dataclass
class _Section:
    path: list[str]  # heading texts from the top, excluding the title heading
    dates: list[date | None]
    lines: list[str] = field(default_factory=list)
    private: bool = False  # this heading or one above it is marked private


def _wikilink_text(match: re.Match) -> str:
    target, heading, alias = match.group(1), match.group(2), match.group(3)
    if heading and heading.startswith("^"):
        heading = None  # a link to a block reads as its note
    if alias:
        return alias.strip()
    parts = [p.strip() for p in (target, heading) if p and p.strip()]
    return BREADCRUMB_SEPARATOR.join(parts)


def _marked_wikilink(match: re.Match) -> str:
    """The words of a link, wrapped in link markers when it names a block of another note."""
    shown = _wikilink_text(match)
    target, heading = match.group(1), match.group(2) or ""
    block = heading[1:].strip() if heading.startswith("^") else ""
    if not shown or not target.strip() or not blocks.is_block_id(block):
        return shown
    return blocks.link_marker(target, block, shown)


def is_note_target(target: str) -> bool:
    """`![[Plan]]` or `![[Plan.md]]` embeds a note; `![[photo.png]]` a file."""
    suffix = PurePosixPath(target.strip()).suffix.lower()
    # "Meeting 2026.03" has a "suffix" that is no file type.
    return suffix in _NOTE_SUFFIXES or not suffix[1:].isalpha()


def embed_key(target: str, heading: str | None) -> str:
    """How an embed is listed in ParsedDocument.embeds: "Note", "Note#Heading"
    or "Note#^blockid" (a block id of other characters is no block: the note)."""
    target = target.strip()
    heading = (heading or "").strip()
    if heading.startswith("^") and not blocks.is_block_id(heading[1:]):
        return target
    return f"{target}#{heading}" if heading else target


def _embed_text(match: re.Match) -> str:
    heading = match.group(2) if match.group(2) and not match.group(2).startswith("^") else None
    parts = [p.strip() for p in (match.group(1), heading) if p and p.strip()]
    return f"[embedded: {BREADCRUMB_SEPARATOR.join(parts)}]"


def callout_label(kind: str, title: str) -> str:
    """`[!note] Title` → "Note — Title"; `[!my-type]` → "My type"; a title that
    only repeats the type (`> [!note] Note`) is said once."""
    label = kind.replace("-", " ").replace("_", " ").strip().capitalize() or "Note"
    title = title.strip()
    if not title or title.lower() == label.lower():
        return label
    return f"{label} — {title}"


def _callouts(lines: list[str]) -> list[str]:
    """A callout's first line becomes its label on a line of its own (bold, so
    the page shows it as the heading of what follows) and its content loses
    one level of `>`; nested callouts are read the same way, inside out."""
    out: list[str] = []
    i = 0
    while i < len(lines):
        match = _CALLOUT.match(lines[i])
        if match is None:
            out.append(lines[i])
            i += 1
            continue
        body: list[str] = []
        i += 1
        while i < len(lines) and _QUOTED.match(lines[i]):
            body.append(_QUOTED.sub("", lines[i], count=1))
            i += 1
        out.append(f"**{callout_label(match.group(2), match.group(3))}**")
        out.extend(_callouts(body))
        out.append("")
    return out


def _callout_anywhere(match: re.Match) -> str:
    # A callout inside a plain quote keeps its quote; its marker still reads as words.
    return f"{match.group(1)}**{callout_label(match.group(2), match.group(3))}**"


def _hide_inline_code(segment: str) -> tuple[str, list[str]]:
    spans: list[str] = []

    def hide(match: re.Match) -> str:
        spans.append(match.group(0))
        return f"\x00{len(spans) - 1}\x00"

    return _INLINE_CODE.sub(hide, segment), spans


def _restore_inline_code(segment: str, spans: list[str]) -> str:
    return _PLACEHOLDER.sub(lambda m: spans[int(m.group(1))], segment)


def normalise_obsidian(text: str, *, marks: bool = False) -> str:
    """Obsidian syntax → readable text, leaving fenced and inline code untouched.
    `marks`: block ids and links to blocks become markers (parsing/blocks.py)
    rather than going, for the parser to take out passage by passage."""
    out: list[str] = []
    if marks:
        text = blocks.without_stray_markers(text)
    for is_code, segment in _code_segments(text):
        if is_code:
            out.append(segment)
            continue
        segment = _COMMENT.sub("", segment)
        segment, spans = _hide_inline_code(segment)
        segment = _EMBED.sub(_embed_text, segment)
        segment = _WIKILINK.sub(_marked_wikilink if marks else _wikilink_text, segment)
        segment = _HIGHLIGHT.sub(r"\1", segment)
        segment = blocks.mark_block_ids(segment) if marks else _BLOCK_ID.sub("", segment)
        ends_with_newline = segment.endswith("\n")
        segment = "\n".join(_callouts(segment.split("\n")))
        if ends_with_newline and not segment.endswith("\n"):
            segment += "\n"
        segment = _CALLOUT_ANYWHERE.sub(_callout_anywhere, segment)
        out.append(_restore_inline_code(segment, spans))
    return "".join(out)


def note_embeds(text: str) -> list[str]:
    """The notes (and headings) a note embeds, in order, each once; code excluded."""
    found: list[str] = []
    for is_code, segment in _code_segments(text):
        if is_code:
            continue
        segment = _COMMENT.sub("", _INLINE_CODE.sub(" ", segment))
        for match in _EMBED.finditer(segment):
            if not is_note_target(match.group(1)):
                continue
            key = embed_key(match.group(1), match.group(2))
            if key not in found:
                found.append(key)
    return found


def _code_segments(text: str) -> list[tuple[bool, str]]:
    segments: list[tuple[bool, str]] = []
    current: list[str] = []
    in_fence = False
    for line in text.splitlines(keepends=True):
        if _FENCE.match(line):
            if not in_fence:
                segments.append((False, "".join(current)))
                current = [line]
            else:
                current.append(line)
                segments.append((True, "".join(current)))
                current = []
            in_fence = not in_fence
            continue
        current.append(line)
    segments.append((in_fence, "".join(current)))
    return segments


def defined_acronyms(text: str) -> list[str]:
    """Acronyms the note defines, as "EPQ: Extended Project Qualification"."""
    found: list[str] = []
    for is_code, segment in _code_segments(text):
        if is_code:
            continue
        for match in _ACRONYM.finditer(_INLINE_CODE.sub(" ", segment)):
            acronym = match.group(2)
            if acronym.endswith("s") and acronym[:-1].isupper():
                acronym = acronym[:-1]  # "(PDFs)"
            letters = [c for c in acronym if c.isupper()]
            words = match.group(1).split()
            # The shortest run of words at the end whose initials (small words
            # skipped) spell the acronym.
            for start in range(len(words) - 1, -1, -1):
                run = words[start:]
                initials = [w[0].upper() for w in run if w.lower() not in _ACRONYM_SMALL_WORDS]
                if len(initials) > len(letters):
                    break
                if initials == letters and run[0].lower() not in _ACRONYM_SMALL_WORDS:
                    entry = f"{acronym}: {' '.join(run)}"
                    if entry not in found:
                        found.append(entry)
                    break
    return found[:MAX_ACRONYMS]


def inline_tags(text: str) -> list[str]:
    tags: list[str] = []
    for is_code, segment in _code_segments(text):
        if is_code:
            continue
        # `#define` in inline code is code, not a tag, even across lines.
        segment = _COMMENT.sub(" ", _INLINE_CODE.sub(" ", segment))
        for line in segment.splitlines():
            if _HEADING.match(line):
                continue
            for tag in _INLINE_TAG.findall(_NOT_TAG_TEXT.sub(" ", line)):
                tag = tag.lower().rstrip("/-")
                if tag and tag not in tags and not _is_colour(tag):
                    tags.append(tag)
    return tags


def _is_colour(tag: str) -> bool:
    return bool(_HEX_COLOUR.fullmatch(tag)) and (
        any(c.isdigit() for c in tag) or len(set(tag)) == 1
    )


def _heading_privacy(text: str, private_sections: set[str]) -> tuple[str, bool]:
    """The heading without its `<!-- private -->` marker, and whether the
    section is private (marked, or named in the frontmatter's private_sections)."""
    marked = bool(_PRIVATE_MARK.search(text))
    text = _PRIVATE_MARK.sub(" ", text).strip()
    return text, marked or " ".join(text.split()).lower() in private_sections


def _sections(body: str, private_sections: set[str] = frozenset()) -> tuple[str, list[_Section]]:
    """Split on ATX headings outside code fences. The first H1, when it comes
    before any text, is the title rather than a section. A private heading
    makes its section and every section below it private."""
    title = ""
    sections: list[_Section] = [_Section(path=[], dates=[])]
    stack: list[tuple[int, str, date | None, bool]] = []
    in_fence = False
    seen_text = False
    for line in body.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
        heading = None if in_fence else _HEADING.match(line)
        if heading is None:
            if line.strip():
                seen_text = True
            sections[-1].lines.append(line)
            continue
        level = len(heading.group(1))
        words = blocks.strip_marks(heading.group(2)).strip()
        text, private = _heading_privacy(words, private_sections)
        if level == 1 and not title and not seen_text and not stack and not private:
            title = text
            continue
        while stack and stack[-1][0] >= level:
            stack.pop()
        found = date_from_text(text)
        stack.append((level, text, found.value if found else None, private))
        sections.append(
            _Section(
                path=[t for _, t, _, _ in stack],
                dates=[d for _, _, d, _ in stack],
                private=any(p for _, _, _, p in stack),
            )
        )
    return title, sections


def _content_date(title: str, sections: list[_Section]):
    """A date given by the title heading or one of the first few headings."""
    headings = [title] if title else []
    headings += [s.path[-1] for s in sections if s.path][:FIRST_HEADINGS_FOR_DATE]
    for text in headings[:FIRST_HEADINGS_FOR_DATE]:
        found = date_from_text(text)
        if found:
            return found
    return None


def _joined(sections: list[_Section]) -> str:
    return blocks.strip_marks("\n".join("\n".join(section.lines) for section in sections))


def parse_markdown(text: str, *, fallback_title: str) -> ParsedDocument:
    front = parse_frontmatter(text)
    body = normalise_obsidian(front.body, marks=True)
    heading_title, sections = _sections(body, set(front.private_sections))
    title = front.title or heading_title or fallback_title

    dated = {s.dates[-1] for s in sections if s.dates and s.dates[-1]}
    is_log = sum(1 for s in sections if s.dates and s.dates[-1]) >= DATED_HEADINGS_FOR_A_LOG

    chunks: list[ChunkDraft] = []
    for section in sections:
        text_body = "\n".join(section.lines).strip()
        if not text_body:
            continue
        # The nearest dated heading above dates the section; only logs use it.
        section_date = next((d for d in reversed(section.dates) if d), None) if is_log else None
        for piece in pack_text(text_body):
            plain, anchors, links = blocks.unmark(piece)
            if not plain.strip():
                continue
            chunks.append(
                ChunkDraft(
                    text=plain,
                    section=BREADCRUMB_SEPARATOR.join(section.path),
                    section_date=section_date,
                    private=section.private,
                    anchors=anchors,
                    links=links,
                )
            )

    record = front.record
    # Tags are shown with the document: one written in a private section stays in it.
    public = [s for s in sections if not s.private]
    tag_text = front.body if len(public) == len(sections) else _joined(public)
    for tag in inline_tags(tag_text):
        if tag not in record.tags:
            record.tags.append(tag)

    parsed = ParsedDocument(title=title, kind="note", chunks=chunks, record=record)
    parsed.embeds = note_embeds(front.body)[:MAX_EMBEDS]
    acronyms = defined_acronyms(tag_text)
    if acronyms:
        # Searched with the title (apps.library.index.fts.title_text): a
        # question that spells the acronym out finds the note that uses it alone.
        record.extra["x_acronyms"] = "; ".join(acronyms)
    parsed.warnings.extend(front.warnings)
    if front.date:
        parsed.content_date, parsed.content_date_source = front.date, "frontmatter"
    elif is_log:
        parsed.content_date, parsed.content_date_source = max(dated), "section"
    else:
        found = _content_date(heading_title, sections)
        if found:
            parsed.content_date, parsed.content_date_source = found.value, "heading"
            parsed.content_date_precision = found.precision
    return parsed


def section_breadcrumbs(text: str) -> list[tuple[str, bool]]:
    """Every section of a note in reading order, as (breadcrumb, private): the
    breadcrumbs its chunks carry, and also those of headings with no text of
    their own ("## Status: DONE" right before another heading)."""
    front = parse_frontmatter(text)
    _, sections = _sections(normalise_obsidian(front.body), set(front.private_sections))
    return [(BREADCRUMB_SEPARATOR.join(s.path), s.private) for s in sections if s.path]


def parse_text(text: str, *, fallback_title: str) -> ParsedDocument:
    chunks = [ChunkDraft(text=piece) for piece in pack_text(text)]
    return ParsedDocument(title=fallback_title, kind="text", chunks=chunks)
