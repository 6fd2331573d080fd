"""Org-mode files (Emacs): read as the Markdown note they would be.

Org's outline is what Jarvis needs from it: headings (`* `, `** `) become the
sections passages are cited by, `#+TITLE:` / `#+DATE:` / `#+FILETAGS:` the
note's title, date and tags, and the rest is text. So the file is rewritten
line by line into Markdown and read by the Markdown reader, which already
knows dated headings, private sections and chunking. What Org has and
Markdown would misread is translated or dropped:

- `# comment` lines are comments in Org, headings in Markdown: dropped;
- headings go one level down (`*` is `##`): the title is `#+TITLE:`;
- property drawers (`:PROPERTIES:` … `:END:`) are metadata: dropped;
- `#+BEGIN_SRC lang` / `#+BEGIN_EXAMPLE` blocks become fenced code (kept
  verbatim), `#+BEGIN_QUOTE` a block quote; other `#+KEYWORD:` lines dropped;
- links `[[target][description]]` read as their description, `[[target]]`
  as the target;
- timestamps `<2026-10-03 Sat 10:00>` read as the date `2026-10-03`, so a
  dated heading dates its section as in a Markdown log;
- heading tags `:work:urgent:` become `#work #urgent` under the heading;
- table rules `|---+---|` become Markdown's `|---|---|`.
"""

from __future__ import annotations

import re

from apps.library.ingest.parsing.markdown import parse_markdown
from apps.library.ingest.parsing.readers import decode_text
from apps.library.ingest.parsing.types import ParsedDocument, ParseRequest

_HEADING = re.compile(r"^(\*+)\s+(.*?)(?:\s+(:[\w@#%:]+:))?\s*$")
_KEYWORD = re.compile(r"^\s*#\+(\w+):\s*(.*)$", re.I)
_BLOCK_BEGIN = re.compile(r"^\s*#\+begin_(\w+)\s*(\S*)", re.I)
_BLOCK_END = re.compile(r"^\s*#\+end_(\w+)", re.I)
_COMMENT = re.compile(r"^\s*#(\s|$)")
_DRAWER = re.compile(r"^\s*:(\w+):\s*$")
_DESCRIBED_LINK = re.compile(r"\[\[([^\]]+)\]\[([^\]]+)\]\]")
_BARE_LINK = re.compile(r"\[\[([^\]]+)\]\]")
_TIMESTAMP = re.compile(r"[<\[](\d{4}-\d{2}-\d{2})(?: [^>\]\n]*)?[>\]]")
_VERBATIM = re.compile(r"(?<![\w=~])[=~]([^\s=~](?:[^\n=~]*[^\s=~])?)[=~](?![\w=~])")
_TABLE_RULE = re.compile(r"^(\s*)\|[-+]+\|?\s*$")
_FENCED = ("src", "example")


def read_org(data: bytes, request: ParseRequest) -> ParsedDocument:
    parsed = parse_markdown(
        org_to_markdown(decode_text(data)), fallback_title=request.fallback_title
    )
    parsed.kind = request.kind
    return parsed


def org_to_markdown(text: str) -> str:
    front: dict[str, str] = {}
    body: list[str] = []
    block = ""  # the kind of #+BEGIN_ block we are in
    in_drawer = False
    for line in text.splitlines():
        if block:
            if _BLOCK_END.match(line):
                body.append("```" if block in _FENCED else "")
                block = ""
            else:
                body.append(line if block in _FENCED else f"> {_inline(line)}")
            continue
        if in_drawer:
            in_drawer = line.strip().lower() != ":end:"
            continue
        begin = _BLOCK_BEGIN.match(line)
        if begin:
            block = begin.group(1).lower()
            body.append(f"```{begin.group(2)}" if block in _FENCED else "")
            continue
        keyword = _KEYWORD.match(line)
        if keyword:
            name, value = keyword.group(1).lower(), keyword.group(2).strip()
            if name in ("title", "date", "filetags") and value:
                front.setdefault(name, value)
            continue
        if _COMMENT.match(line):
            continue
        if _DRAWER.match(line) and line.strip().lower() != ":end:":
            in_drawer = True
            continue
        body.extend(_line(line))
    return _frontmatter(front) + "\n".join(body) + "\n"


def _line(line: str) -> list[str]:
    heading = _HEADING.match(line)
    if heading:
        stars, title, tags = heading.groups()
        # One level down: Org's top headings are sections, and a Markdown
        # "# " heading would be read as the note's title.
        lines = [f"{'#' * min(len(stars) + 1, 6)} {_inline(title)}"]
        if tags:
            lines.append(" ".join(f"#{tag}" for tag in tags.strip(":").split(":") if tag))
        return lines
    rule = _TABLE_RULE.match(line)
    if rule:
        cells = line.strip().strip("|").split("+")
        return [rule.group(1) + "|" + "|".join("---" for _ in cells) + "|"]
    return [_inline(line)]


def _inline(text: str) -> str:
    text = _DESCRIBED_LINK.sub(lambda m: m.group(2), text)
    text = _BARE_LINK.sub(lambda m: m.group(1).removeprefix("file:"), text)
    text = _TIMESTAMP.sub(lambda m: m.group(1), text)
    return _VERBATIM.sub(lambda m: f"`{m.group(1)}`", text)


def _frontmatter(front: dict[str, str]) -> str:
    if not front:
        return ""
    lines = ["---"]
    if "title" in front:
        lines.append(f"title: {_yaml_string(_inline(front['title']))}")
    if "date" in front:
        lines.append(f"date: {_yaml_string(_inline(front['date']))}")
    tags = [tag for tag in front.get("filetags", "").strip(":").split(":") if tag.strip()]
    if tags:
        lines.append("tags: [" + ", ".join(_yaml_string(tag.strip()) for tag in tags) + "]")
    return "\n".join([*lines, "---", ""])


def _yaml_string(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'
