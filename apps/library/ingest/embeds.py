"""Obsidian embeds (`![[Note]]`, `![[Note#Heading]]`, `![[Note#^blockid]]`):
the embedded note's text (all of it, one heading's, or the one paragraph or
list item a block id names) becomes a passage of the note that embeds it, as
a reader sees it there.

The parser sees one file only, so it lists the embeds
(`ParsedDocument.embeds`) and the sync resolves them here, after the rest of
the collection is written: the embedded passages are the target note's own
stored passages (parsed in the parser's child like any other), never a new
parse in the worker. Limits:

- only notes of the same collection, resolved as Obsidian does (a bare name
  matches any folder, the embedding note's own folder first, then the
  shortest path);
- a note outside a private folder never pulls in one inside it, and private
  sections of the target are never pulled in: embedding must not widen who
  may read a passage; an embed written in a private section stays private;
- one level: the target's own embedded passages are not followed, which also
  makes cycles (A embeds B embeds A) harmless;
- at most MAX_EMBED_CHARS of text per embed.

An embedded note that changes later is picked up when the embedding note is
next parsed (its own bytes changed, or a reprocess).
"""

from __future__ import annotations

from pathlib import PurePosixPath

from apps.library.ingest.parsing.blocks import block_text
from apps.library.ingest.parsing.chunking import pack_text, without_overlap
from apps.library.ingest.parsing.markdown import BREADCRUMB_SEPARATOR
from apps.library.ingest.parsing.types import ChunkDraft, ParsedDocument
from apps.library.models import Document, DocumentFile, Source
from apps.library.paths import under

EMBED_ORIGIN = "embed"
MAX_EMBED_CHARS = 4000
NOTE_SUFFIXES = (".md", ".markdown")


def note_path(source: Source, path: str, target: str, unwritten=()) -> str | None:
    """The collection path `target` names, as Obsidian resolves a link."""
    wanted = target.strip().strip("/")
    if PurePosixPath(wanted).suffix.lower() not in NOTE_SUFFIXES:
        wanted += ".md"
    name = PurePosixPath(wanted).name.lower()
    stored = DocumentFile.objects.filter(source=source, path__iendswith=name)
    candidates = [
        p
        for p in {*stored.values_list("path", flat=True), *unwritten}
        if p.lower() == wanted.lower()
        or p.lower().endswith("/" + wanted.lower())
        or ("/" not in wanted and PurePosixPath(p).name.lower() == name)
    ]
    if not candidates:
        return None
    folder = str(PurePosixPath(path).parent)
    return sorted(candidates, key=lambda p: (str(PurePosixPath(p).parent) != folder, len(p), p))[0]


# A passage as embeds read it: (section, text, block anchors).
Piece = tuple[str, str, dict]


def _passages(pieces: list[Piece], heading: str) -> list[str]:
    """The texts of passages: all, those under `heading`, or (`^id`) the one
    block that id names."""
    if heading.startswith("^"):
        return next(
            (
                [block_text(text, anchors[heading[1:]])]
                for _, text, anchors in pieces
                if isinstance(anchors.get(heading[1:]), int)
            ),
            [],
        )
    if not heading:
        return [text for _, text, _ in pieces]
    wanted = " ".join(heading.split()).lower()
    return [
        text
        for section, text, _ in pieces
        if wanted in (part.strip().lower() for part in section.split(BREADCRUMB_SEPARATOR))
    ]


def _stored(source: Source, path: str) -> tuple[bool, list[Piece]] | None:
    """(in a private folder, its passages) of the written note at `path`."""
    document = (
        Document.objects.filter(files__source=source, files__path=path, status="ready")
        .only("id", "in_private_dir")
        .first()
    )
    if document is None:
        return None
    chunks = document.chunks.filter(annotation="", private=False).exclude(origin=EMBED_ORIGIN)
    rows = chunks.order_by("ordinal").values_list("section", "text", "marks")
    return document.in_private_dir, [
        (section, text, (marks or {}).get("anchors") or {}) for section, text, marks in rows
    ]


def _unwritten(source: Source, path: str, parsed: ParsedDocument):
    """The same for a note parsed in this sync but not written yet (it embeds
    notes too, so it waits with the one that embeds it)."""
    pieces = [
        (c.section, c.text, c.anchors)
        for c in parsed.chunks
        if not c.annotation and not c.private and c.origin != EMBED_ORIGIN
    ]
    return under(path, source.private_dirs), pieces


def embedded_text(
    *, source: Source, path: str, key: str, waiting: dict[str, ParsedDocument] | None = None
) -> tuple[str, str] | None:
    """(label, text) of one embed ("Note" or "Note#Heading") of the note at
    `path`, or None when it names nothing this note may show. `waiting`: notes
    of this sync not written yet, by path."""
    target, _, heading = key.partition("#")
    found = note_path(source, path, target, waiting or ())
    if found is None or found == path:
        return None
    if waiting and found in waiting:
        target_note = _unwritten(source, found, waiting[found])
    else:
        target_note = _stored(source, found)
    if target_note is None:
        return None
    private, pieces = target_note
    if private and not under(path, source.private_dirs):
        return None
    text = ""
    previous = ""
    for passage in _passages(pieces, heading):
        piece = without_overlap(previous, passage)
        previous = passage
        text = f"{text}\n\n{piece}" if text else piece
        if len(text) >= MAX_EMBED_CHARS:
            text = text[:MAX_EMBED_CHARS].rsplit(" ", 1)[0] + " …"
            break
    if not text.strip():
        return None
    # A block is labelled by its note alone: the id is no word of any passage.
    shown_heading = "" if heading.startswith("^") else heading
    label = BREADCRUMB_SEPARATOR.join(p for p in (PurePosixPath(found).stem, shown_heading) if p)
    return label, text


def add_embedded_passages(
    parsed: ParsedDocument,
    *,
    source: Source,
    path: str,
    waiting: dict[str, ParsedDocument] | None = None,
) -> int:
    """Insert each embed's passages right after the passage that embeds it.
    Returns how many passages were added."""
    added = 0
    for key in parsed.embeds:
        found = embedded_text(source=source, path=path, key=key, waiting=waiting)
        if found is None:
            continue
        label, text = found
        marker = f"[embedded: {label}]"
        target, _, heading = key.partition("#")
        heading = "" if heading.startswith("^") else heading
        written = BREADCRUMB_SEPARATOR.join(p.strip() for p in (target, heading) if p.strip())
        at = next(
            (
                i
                for i, c in enumerate(parsed.chunks)
                if c.origin != EMBED_ORIGIN
                and (marker in c.text or f"[embedded: {written}]" in c.text)
            ),
            len(parsed.chunks) - 1,
        )
        host = parsed.chunks[at] if parsed.chunks else ChunkDraft(text="")
        drafts = [
            ChunkDraft(
                text=piece,
                section=f"Embedded from {label}",
                private=host.private,
                origin=EMBED_ORIGIN,
            )
            for piece in pack_text(text)
        ]
        # After the host passage and the embeds already placed after it (in order).
        end = at + 1
        while end < len(parsed.chunks) and parsed.chunks[end].origin == EMBED_ORIGIN:
            end += 1
        parsed.chunks[end:end] = drafts
        added += len(drafts)
    return added
