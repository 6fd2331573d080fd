"""What every parser returns. Parsers are pure: bytes in, ParsedDocument out,
no database and no embedding (those happen later, outside any transaction)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date


class UnreadableDocument(Exception):
    """The file cannot be indexed at all; the message is the reason shown to the
    person (e.g. "encrypted PDF (password required)")."""


@dataclass
class BlockLink:
    """`[[Note#^b15695|the words]]` in a passage: where its words stand in the
    passage's text (apps.library.ingest.parsing.blocks)."""

    start: int
    end: int
    target: str  # the note as written ("Note", "folder/Note.md")
    block: str  # the block id, without its `^`


@dataclass
class ChunkDraft:
    text: str  # what is shown, cited and keyword-indexed
    section: str = ""  # heading breadcrumb, "Projects › PixelNet"
    page: int | None = None  # 1-based PDF page
    annotation: str = ""  # "" for body text, else highlight|underline|squiggly|strikeout|note
    section_date: date | None = None  # set when the chunk sits under a dated heading
    # Under a heading marked private (`## Health <!-- private -->` or listed in
    # the note's `private_sections:`): owner-only and local-only, like a private folder.
    private: bool = False
    origin: str = ""  # "" for text the file holds, "ocr" for text recognised in an image
    # Obsidian block ids this passage holds (id -> offset of its block in
    # `text`) and its links to blocks elsewhere: anchors for the document
    # page, never words of the text (apps.library.ingest.parsing.blocks).
    anchors: dict[str, int] = field(default_factory=dict)
    links: list[BlockLink] = field(default_factory=list)


@dataclass
class Figure:
    """An image worth describing: a PDF figure (with the caption printed near
    it) or an uploaded photo. Turned into a `[FIGURE p.N]` / `[PHOTO]` chunk
    after parsing, described by a vision model when the collection allows it
    (apps.library.ingest.vision); without one the caption alone is indexed."""

    kind: str  # "figure" | "photo"
    page: int  # 1-based; a photo is page 1
    caption: str
    # What a description is remembered by: the extracted image's own bytes,
    # so re-parsing an unchanged file never asks for a new description.
    image_hash: str
    # A downscaled PNG/JPEG for the vision model; empty when the collection
    # does not describe images (no need to carry the pixels around).
    image: bytes = b""
    media_type: str = "image/png"


class OcrNeeded(Exception):
    """Raised instead of reading scanned pages or images by OCR when the parse
    may not (`ParseOptions.ocr_elsewhere`, the quick lane): OCR takes seconds
    a page, so the file goes to the long lane, whose time limit grows with
    `pages` (apps.library.ingest.isolated)."""

    def __init__(self, pages: int) -> None:
        super().__init__(f"{pages} scanned page{'s' if pages != 1 else ''} to read by OCR")
        self.pages = pages


@dataclass(frozen=True)
class ParseOptions:
    """What a parse may do beyond reading the file; plain data, so it can be
    handed to a child process. Defaults suit a collection with nothing set."""

    ocr_languages: str = "eng"  # Tesseract's "eng+deu" form; "" turns OCR off
    figure_images: bool = False  # carry figure/photo pixels for a vision model
    ocr_max_pages: int = 100  # scanned PDF pages read by OCR (JARVIS_OCR_MAX_PAGES)
    ocr_elsewhere: bool = False  # raise OcrNeeded instead of running OCR (the quick lane)


@dataclass(frozen=True)
class ParseRequest:
    """What a reader is told besides the bytes (`apps.library.formats` names
    each format's reader; every reader takes (data, ParseRequest))."""

    kind: str  # the document kind being read ("paper" reads as a PDF)
    filename: str
    fallback_title: str  # the file name made readable, when the file names no title
    url: str = ""  # where a web page came from
    options: ParseOptions = field(default_factory=ParseOptions)


@dataclass
class RecordFields:
    """Frontmatter mapped onto filterable fields. `extra` holds every other
    scalar key as x_<key>; Jarvis's own fields are never set from here."""

    category: str = ""
    status: str = ""
    entity: str = ""
    event_date: date | None = None
    tags: list[str] = field(default_factory=list)
    extra: dict[str, str | int | float | bool] = field(default_factory=dict)

    def header(self) -> str:
        """The record line embedded with every chunk, e.g. "job_application · Acme · rejected"."""
        return " · ".join(part for part in (self.category, self.entity, self.status) if part)


@dataclass
class ParsedDocument:
    title: str
    kind: str  # note | text | pdf | web | epub | paper | image | docx | pptx | xlsx | …
    chunks: list[ChunkDraft]
    record: RecordFields = field(default_factory=RecordFields)
    # A date the content itself gives: frontmatter `date:` or a dated first heading.
    content_date: date | None = None
    content_date_source: str = ""  # "frontmatter" | "heading" | "section" | ""
    content_date_precision: str = "day"  # "day" | "month"
    authors: str = ""
    doi: str = ""
    url: str = ""  # web pages and papers: where it came from
    site: str = ""  # web pages: the site's name or host
    warnings: list[str] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    # Filled after parsing, outside the parse: image_hash -> one-paragraph description.
    descriptions: dict[str, str] = field(default_factory=dict)
    # Pages whose text was recognised by OCR, and those of them that yielded none.
    ocr_pages: list[int] = field(default_factory=list)
    ocr_empty_pages: list[int] = field(default_factory=list)
    # Notes this note embeds (`![[Note]]` → "Note", `![[Note#Heading]]` →
    # "Note#Heading"): the sync pulls their passages in (apps.library.ingest.embeds).
    embeds: list[str] = field(default_factory=list)
