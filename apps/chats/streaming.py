"""A reply's text while it is being written: cheap frames that only add what
arrived.

Re-rendering a whole answer's Markdown ~15 times a second for every running
reply is what capped one web process (bench/stream_load.py). So while a reply
streams, its answer is shown as two parts: the blocks already closed (up to
the last blank line outside a fenced code block), rendered through the one
Markdown path once each and kept; and the open block, shown as plain text
(`white-space: pre-wrap`) that frames append to. A frame then carries either
the text appended since the last one, `<span data-append="ID" data-at="N">…`,
or, when a block closed or the text changed other than by growing, the whole
answer block again. The final frame is always the whole answer rendered
properly (with its citation chips), so the streamed shape never outlives the
stream. The reasoning streams the same way, as plain text.

Offsets are UTF-16 code units (what a browser's string length counts) of the
text without carriage returns (which HTML parsing would turn into line
feeds): the open element carries `data-end`, where the text it shows ends;
static/js/chat.js appends only the part of an append past that, and asks for
the whole reply again when an append starts beyond it (a frame it missed).
"""

from __future__ import annotations

import re

from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe

from apps.core.markdown import render_markdown

FENCES = ("```", "~~~")
# A blank line: whitespace only, after a line break.
_BLANK_LINE = re.compile(r"(?<=\n)[ \t]*\n")

SAME, APPEND, WHOLE = "same", "append", "whole"


def units(text: str) -> int:
    """The length a browser counts: UTF-16 code units, carriage returns left out."""
    text = text.replace("\r", "")
    return len(text) if text.isascii() else len(text.encode("utf-16-le")) // 2


def open_from(text: str, start: int = 0) -> int:
    """Where the open block of `text` begins: just after the last blank line
    that is outside a fenced code block, searching from `start` (0, or a
    place known to be such a boundary)."""
    tail = text[start:]
    if "\n" not in tail:
        return start
    if not any(fence in tail for fence in FENCES):
        ends = [match.end() for match in _BLANK_LINE.finditer(tail)]
        return start + ends[-1] if ends else start
    inside = False
    boundary = position = start
    for line in tail.splitlines(keepends=True):
        position += len(line)
        if line.lstrip(" \t").startswith(FENCES):
            inside = not inside
        elif not inside and line.endswith("\n") and not line.strip() and position - start > 1:
            boundary = position
    return boundary


class TextStream:
    """One growing text of a reply as frames show it.

    `sent` is the text the last published frame showed (every socket of the
    chat got it) and `closed` where its open block begins. `whole` renders the
    streamed shape of any text without changing what counts as published (a
    socket that attaches gets it); `step` decides the next published frame.
    """

    def __init__(self, element: str, *, markdown: bool) -> None:
        self.element = element  # the id of the open block's element
        self.markdown = markdown
        self.sent = ""
        self.closed = 0
        self._rendered_source = ""  # the closed blocks last rendered…
        self._rendered_html = ""  # …and their HTML

    def whole(self, text: str) -> SafeString:
        """The streamed shape of `text`: closed blocks (Markdown, each
        rendered once and kept) and the open block as plain text."""
        boundary = self._boundary(text)
        closed_html = self._closed_html(text[:boundary]) if boundary else ""
        open_part = format_html(
            '<div id="{}" class="msg__open" data-end="{}">{}</div>',
            self.element,
            units(text),
            text[boundary:].replace("\r", ""),
        )
        # Sanitised Markdown (the one path) and format_html's escaped text.
        return mark_safe(closed_html + open_part)  # noqa: S308

    def step(self, text: str) -> tuple[str, SafeString | None]:
        """The next published frame for `text`: (SAME, None) when nothing
        changed; (APPEND, the append element) when it only grew within the
        open block; (WHOLE, None) for the first text, when a block closed or
        when the text was rewritten (the caller sends the whole block).
        Records `text` as published."""
        if text == self.sent:
            return SAME, None
        # The first text goes whole: its block may be hidden while empty (the reasoning's).
        grows = bool(self.sent) and text.startswith(self.sent)
        boundary = self._boundary(text)
        if grows and boundary == self.closed:
            at = units(self.sent)
            added = text[len(self.sent) :].replace("\r", "")
            self.sent = text
            return APPEND, format_html(
                '<span data-append="{}" data-at="{}">{}</span>', self.element, at, added
            )
        self.sent, self.closed = text, boundary
        return WHOLE, None

    def synced(self, text: str) -> None:
        """A whole block showing `text` went to every socket."""
        self.sent, self.closed = text, self._boundary(text)

    def _boundary(self, text: str) -> int:
        if not self.markdown:
            return 0
        if self.closed and text.startswith(self.sent):
            return open_from(text, self.closed)  # blocks only close further on
        return open_from(text)

    def _closed_html(self, source: str) -> str:
        if source == self._rendered_source:
            return self._rendered_html
        if self._rendered_source and source.startswith(self._rendered_source):
            # Only the newly closed blocks are rendered; the rest is kept.
            fresh = render_markdown(source[len(self._rendered_source) :])
            html = self._rendered_html + str(fresh)
        else:
            html = str(render_markdown(source))
        self._rendered_source, self._rendered_html = source, html
        return html


def plain_html(text: str) -> SafeString:
    """Escaped text with its line breaks, for a finished reasoning block."""
    return mark_safe(escape(text).replace("\n", "<br>"))  # noqa: S308 (escaped)
