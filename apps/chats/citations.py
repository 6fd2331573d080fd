"""Citations: the model cites passages as [n]; code checks every number
against the passages actually returned in this turn, removes the ones that
match nothing (counting them), and renders the valid ones as chips that link
to the document page, with its date and a warning when it is superseded; a
web source's chip links to its page and says when it was fetched."""

from __future__ import annotations

import re

from django.template.defaultfilters import pluralize
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString

from apps.core.markdown import render_markdown

_CITE = re.compile(r"\[(\d{1,3})\]")
# Fenced blocks and inline code: `xs[0]` there is code, not a citation.
_CODE = re.compile(
    r"(^[ \t]*(?:```|~~~).*?(?:^[ \t]*(?:```|~~~)[^\n]*$|\Z)|`[^`\n]+`)", re.S | re.M
)
# Marks where an invalid citation was cut, so only the space around it is tidied.
_CUT = "\x00"
_CUT_BEFORE_PUNCTUATION = re.compile(rf"[ \t]*{_CUT}+(?=[.,;:!?)]|$)", re.M)
_CUT_BETWEEN_WORDS = re.compile(rf"(?<=[ \t]){_CUT}+[ \t]+|{_CUT}+")
_TAG_OR_TEXT = re.compile(r"(<[^>]+>)")


def verify(text: str, valid: set[int]) -> tuple[str, list[int], int]:
    """(text without invalid citations, valid numbers in order of use, invalid count)."""
    used: list[int] = []
    invalid = 0

    def keep(match: re.Match) -> str:
        nonlocal invalid
        number = int(match.group(1))
        if number in valid:
            if number not in used:
                used.append(number)
            return match.group(0)
        invalid += 1
        return _CUT

    pieces = _CODE.split(text.replace(_CUT, ""))
    # Odd pieces are code (the split's captured group): kept exactly as written.
    cleaned = "".join(
        piece if index % 2 else _CITE.sub(keep, piece) for index, piece in enumerate(pieces)
    )
    cleaned = _CUT_BETWEEN_WORDS.sub("", _CUT_BEFORE_PUNCTUATION.sub("", cleaned))
    return cleaned, used, invalid


def says_nothing(text: str) -> bool:
    """Has `text` no words besides citation numbers ("[1] [3]", or nothing
    left once the copied passage headers are gone)? A small model sometimes
    answers so."""
    return not re.search(r"\w", _CITE.sub("", text))


def without_labels(text: str, labels: list[str], wrapper: tuple[str, ...] = ()) -> str:
    """`text` without the passage labels Jarvis wrote (`[6] "Title" · path ·
    date · latest version`) that a small model copied. A line that is a
    header (with or without its quotes; whole, as far as the title, or only
    some of its " · " fields after its number) is dropped; a header run into
    a sentence, whole or as far as the title (`[6] "Title"`), becomes its
    number, the citation it stands for. Lines of the wrapper the passages
    came in (`wrapper`: `<retrieved_data>` …) are dropped too. The header
    and the wrapper are Jarvis's own bookkeeping, never part of an answer."""
    known = {label.strip() for label in labels}
    heads = {label[: label.index('" ') + 1] for label in known if '" ' in label}
    unquoted = {_unquoted(label) for label in known | heads}
    lines = unquoted | set(wrapper)
    by_number = {
        int(m.group(1)): _unquoted(label) for label in known if (m := _NUMBERED.match(label))
    }
    kept = [
        line
        for line in text.split("\n")
        if _unquoted(line) not in lines and not _pieces_of_header(line, by_number)
    ]
    text = "\n".join(kept).strip("\n")
    for label in sorted(known, key=len, reverse=True):
        # A whole header names its passage whatever number the model put
        # before it (the real model wrote passage 1's header as "[3] …"):
        # it becomes the number of the passage it names.
        number, body = label[: label.index("]") + 1], label[label.index("]") + 1 :].strip()
        text = re.sub(rf"\[\d{{1,3}}\]\s*{re.escape(body)}", number, text)
    for head in sorted(heads, key=len, reverse=True):
        text = text.replace(head, head[: head.index("]") + 1])
    return text


_NUMBERED = re.compile(r"\s*\[(\d{1,3})\]")


def _pieces_of_header(line: str, by_number: dict[int, str]) -> bool:
    """A line `[n] …` made only of pieces of a passage's header, its fields
    joined by " · " (the real model wrote `[1] · path › section · undated ·
    latest version`, the title left out). The header may be another
    passage's: the real model also copied passage 3's header under the
    number 1, and the 1 left behind cited the wrong passage."""
    found = _NUMBERED.match(line)
    if found is None or " · " not in line or int(found.group(1)) not in by_number:
        return False
    pieces = [piece.strip() for piece in _unquoted(line[found.end() :]).split(" · ")]
    return any(all(piece in label for piece in pieces) for label in by_number.values())


def _unquoted(line: str) -> str:
    return line.strip().replace('"', "")


def removed_note(count: int) -> str:
    """The note under a reply whose model cited passages it was never shown."""
    return (
        f"{count} citation{pluralize(count)} pointed at no passage"
        f" and {pluralize(count, 'was,were')} removed."
    )


def fetched_words(iso: str) -> str:
    """A stored fetch time in words: "2026-12-02 14:40 UTC" (they are stored in UTC)."""
    return f"{iso[:16].replace('T', ' ')} UTC" if iso else "at an unknown time"


def web_chip(citation: dict) -> SafeString:
    """A web source: the chip links to the page itself (it is not in the
    library), says it is from the web and when it was fetched."""
    when = fetched_words(citation.get("fetched_at") or "")
    title = f"Web: {citation['title']} · {citation['url']} · fetched {when}"
    return format_html(
        '<a class="cite cite--web" href="{}" title="{}" data-cite="{}" target="_blank" '
        'rel="noopener noreferrer nofollow">{}</a>',
        citation["url"],
        title,
        citation["n"],
        citation["n"],
    )


def chip(citation: dict) -> SafeString:
    if citation.get("kind") == "web":
        return web_chip(citation)
    url = reverse("library:document", args=[citation["document_id"]])
    anchor = f"{url}#chunk-{citation['chunk_id']}"
    when = citation.get("date") or "undated"
    if citation.get("is_latest", True):
        title = f"{citation['title']} · {citation['path']} · {when}"
        css = "cite"
    else:
        newer = citation.get("superseded_by") or "a newer version"
        title = f"{citation['title']} · {when} · superseded by {newer}"
        css = "cite cite--old"
    return format_html(
        '<a class="{}" href="{}" title="{}" data-cite="{}">{}</a>',
        css,
        anchor,
        title,
        citation["n"],
        citation["n"],
    )


def render_answer(text: str, citations: list[dict]) -> SafeString:
    """Markdown through the one sanitising path, then [n] → chips (outside code)."""
    html = str(render_markdown(text))
    by_number = {c["n"]: c for c in citations}
    pieces = []
    in_code = 0
    for piece in _TAG_OR_TEXT.split(html):
        if piece.startswith("<"):
            name = piece.strip("</>").split()[0].lower() if piece.strip("</>") else ""
            if name in ("code", "pre"):
                in_code += -1 if piece.startswith("</") else 1
            pieces.append(piece)
            continue
        if in_code:
            pieces.append(piece)
            continue
        pieces.append(
            _CITE.sub(
                lambda m: (
                    str(chip(by_number[int(m.group(1))]))
                    if int(m.group(1)) in by_number
                    else m.group(0)
                ),
                piece,
            )
        )
    # Built from sanitised HTML plus chips made by format_html: safe by construction.
    return SafeString("".join(pieces))
