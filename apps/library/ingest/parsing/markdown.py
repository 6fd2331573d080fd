"""Markdown notes (Obsidian-flavoured) → heading-aware chunks.

A note is split on its headings; each section is packed into chunks that carry
the section's breadcrumb ("Project Statuses › PixelNet"). Obsidian syntax is
turned into the text a reader would see rather than dropped: `[[Note|alias]]`
reads "alias", an embed reads "[embedded: file]", a callout reads "Note: …".
Headings that carry a date date the sections under them; a note with two or
more dated headings is a log, and its newest section is what "now" means.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date

from apps.library.ingest.parsing.chunking import pack_text
from apps.library.ingest.parsing.frontmatter import parse_frontmatter
from apps.library.ingest.parsing.types import ChunkDraft, ParsedDocument
from apps.library.naming import date_from_text

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_COMMENT = re.compile(r"%%.*?%%", re.S)
_EMBED = re.compile(r"!\[\[([^\]|#]+)(?:#([^\]|]+))?(?:\|[^\]]*)?\]\]")
_WIKILINK = re.compile(r"\[\[([^\]|#]*)(?:#([^\]|]+))?(?:\|([^\]]+))?\]\]")
_HIGHLIGHT = re.compile(r"==(?=\S)(.+?)(?<=\S)==")
_CALLOUT = re.compile(r"^(\s*>\s*)\[!(\w+)\][+-]?\s*(.*)$", re.M)
_INLINE_TAG = re.compile(r"(?<![\w#&/])#([A-Za-z_][\w/-]*)")
_INLINE_CODE = re.compile(r"(`+).+?\1")
_PRIVATE_MARK = re.compile(r"\s*<!--\s*private\s*-->\s*", re.I)

BREADCRUMB_SEPARATOR = " › "
DATED_HEADINGS_FOR_A_LOG = 2
FIRST_HEADINGS_FOR_DATE = 3


@dataclass
class _Section:
    path: list[str]  # heading texts from the top, excluding the title heading
    dates: list[date | None]
    lines: list[str] = field(default_factory=list)
    private: bool = False  # this heading or one above it is marked private


def _wikilink_text(match: re.Match) -> str:
    target, heading, alias = match.group(1), match.group(2), match.group(3)
    if alias:
        return alias.strip()
    parts = [p.strip() for p in (target, heading) if p and p.strip()]
    return BREADCRUMB_SEPARATOR.join(parts)


def _embed_text(match: re.Match) -> str:
    parts = [p.strip() for p in (match.group(1), match.group(2)) if p and p.strip()]
    return f"[embedded: {BREADCRUMB_SEPARATOR.join(parts)}]"


def _callout_text(match: re.Match) -> str:
    prefix, kind, title = match.group(1), match.group(2), match.group(3).strip()
    label = kind.capitalize()
    return f"{prefix}{label}: {title}" if title else f"{prefix}{label}:"


def normalise_obsidian(text: str) -> str:
    """Obsidian syntax → readable text, leaving fenced code untouched."""
    out: list[str] = []
    for is_code, segment in _code_segments(text):
        if is_code:
            out.append(segment)
            continue
        segment = _COMMENT.sub("", segment)
        segment = _EMBED.sub(_embed_text, segment)
        segment = _WIKILINK.sub(_wikilink_text, segment)
        segment = _HIGHLIGHT.sub(r"\1", segment)
        segment = _CALLOUT.sub(_callout_text, segment)
        out.append(segment)
    return "".join(out)


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


def inline_tags(text: str) -> list[str]:
    tags: list[str] = []
    for is_code, segment in _code_segments(text):
        if is_code:
            continue
        for line in segment.splitlines():
            if _HEADING.match(line):
                continue
            # `#define` in inline code is code, not a tag.
            for tag in _INLINE_TAG.findall(_INLINE_CODE.sub(" ", line)):
                tag = tag.lower().rstrip("/-")
                if tag and tag not in tags:
                    tags.append(tag)
    return tags


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
        text, private = _heading_privacy(heading.group(2).strip(), private_sections)
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
    return "\n".join("\n".join(section.lines) for section in sections)


def parse_markdown(text: str, *, fallback_title: str) -> ParsedDocument:
    front = parse_frontmatter(text)
    body = normalise_obsidian(front.body)
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
            chunks.append(
                ChunkDraft(
                    text=piece,
                    section=BREADCRUMB_SEPARATOR.join(section.path),
                    section_date=section_date,
                    private=section.private,
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
