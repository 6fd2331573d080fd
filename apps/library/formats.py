"""Every file format the library reads, in one table.

A format is one row: the document kind it becomes, what the library calls
it, the file names that claim it, what its bytes must be (the sniff family,
`ingest/filetypes.py`), the reader that turns its bytes into a ParsedDocument
(named as "module:function" and imported only where parsing runs, the
parser's child process), whether a synced folder reads it, which input cap
applies before parsing, how its original downloads, and the library filter
it sits under. The upload checks, the add page's accepted types, folder sync,
the input caps, downloads, the library's filters and Document.kind's choices
are all read from here, so a new format is one reader module and one row.

Pure: no Django, no parser imported (the web process never loads PyMuPDF for
a table lookup).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath

# Sniff kinds of the text family (`filetypes.family`): bytes that are text.
TEXT_FAMILY = "text"
_READERS = "apps.library.ingest.parsing.readers"


@dataclass(frozen=True)
class Format:
    kind: str  # Document.kind
    label: str  # the badge and the kind's choice label
    reader: str  # "module:function", called as reader(data, ParseRequest)
    extensions: tuple[str, ...] = ()  # lower-case names that claim this format
    family: str = ""  # what `sniff` must find for those names ("" = the kind itself)
    sniffed: str = ""  # the sniff kind typed as this format whatever the name ("" = none)
    synced: bool = False  # read from synced folders (the rest come as uploads)
    cap: str = ""  # the input cap before parsing: "text" | "pdf" | "" (ZIPs are always capped)
    name: str = ""  # how a refusal names it ("" = the label)
    # How the original downloads: "text" (as text/plain), "image" (by its
    # signature), or (first bytes, content type); anything else is octet-stream.
    download: tuple[bytes, str] | str = "text"
    group: str = ""  # the library's kind filter
    batched: bool = False  # small files are parsed many to one child process
    accept: tuple[str, ...] = ()  # extra tokens for a file picker ("image/*")

    @property
    def sniff_family(self) -> str:
        return self.family or self.kind

    @property
    def called(self) -> str:
        return self.name or self.label


_ZIP = b"PK\x03\x04"
_PDF = (b"%PDF-", "application/pdf")
_OOXML = "application/vnd.openxmlformats-officedocument."
_ODF = "application/vnd.oasis.opendocument."

# The order is Document.kind's choices' order.
FORMATS: tuple[Format, ...] = (
    Format("note", "Note", f"{_READERS}:read_note", (".md", ".markdown"), TEXT_FAMILY,
           sniffed="markdown", synced=True, cap="text", group="notes", batched=True),
    Format("text", "Text", f"{_READERS}:read_text", (".txt",), TEXT_FAMILY,
           sniffed="text", synced=True, cap="text", group="notes", batched=True),
    Format("pdf", "PDF", f"{_READERS}:read_pdf", (".pdf",), sniffed="pdf", synced=True,
           cap="pdf", download=_PDF, group="papers"),
    Format("web", "Web page", f"{_READERS}:read_html", (".html", ".htm", ".xhtml"), TEXT_FAMILY,
           sniffed="html", cap="text", group="web"),
    Format("epub", "E-book", f"{_READERS}:read_epub", (".epub",), sniffed="epub", name="EPUB",
           download=(_ZIP, "application/epub+zip"), group="papers"),
    # A PDF that came as a paper (arXiv, bioRxiv, the digest): never typed by its bytes.
    Format("paper", "Paper", f"{_READERS}:read_pdf", family="pdf", cap="pdf", name="PDF",
           download=_PDF, group="papers"),
    Format("image", "Image", f"{_READERS}:read_image",
           (".png", ".jpg", ".jpeg", ".webp", ".heic", ".heif", ".tif", ".tiff"),
           sniffed="image", download="image", group="images", accept=("image/*",)),
    Format("docx", "Word document", f"{_READERS}:read_docx", (".docx", ".dotx"), sniffed="docx",
           download=(_ZIP, f"{_OOXML}wordprocessingml.document"), group="office"),
    Format("pptx", "Slides", f"{_READERS}:read_pptx", (".pptx", ".ppsx", ".potx"),
           sniffed="pptx", name="PowerPoint file",
           download=(_ZIP, f"{_OOXML}presentationml.presentation"), group="office"),
    Format("xlsx", "Spreadsheet", f"{_READERS}:read_xlsx", (".xlsx", ".xlsm", ".xltx", ".xltm"),
           sniffed="xlsx", name="Excel workbook",
           download=(_ZIP, f"{_OOXML}spreadsheetml.sheet"), group="office"),
    Format("odt", "OpenDocument text", f"{_READERS}:read_odt", (".odt",), sniffed="odt",
           download=(_ZIP, f"{_ODF}text"), group="office"),
    Format("ods", "OpenDocument spreadsheet", f"{_READERS}:read_ods", (".ods",), sniffed="ods",
           download=(_ZIP, f"{_ODF}spreadsheet"), group="office"),
    Format("rtf", "RTF document", f"{_READERS}:read_rtf", (".rtf",), sniffed="rtf",
           download=(b"{\\rtf", "application/rtf"), group="office"),
    Format("csv", "CSV table", f"{_READERS}:read_csv", (".csv", ".tsv"), TEXT_FAMILY,
           sniffed="csv", group="office"),
    Format("org", "Org note", "apps.library.ingest.parsing.org:read_org", (".org",), TEXT_FAMILY,
           synced=True, cap="text", group="notes", batched=True),
)  # fmt: skip

BY_KIND = {f.kind: f for f in FORMATS}
BY_EXTENSION = {extension: f for f in FORMATS for extension in f.extensions}
_BY_SNIFF = {f.sniffed: f for f in FORMATS if f.sniffed}


def format_of(kind: str) -> Format | None:
    return BY_KIND.get(kind)


def extension_of(name: str) -> str:
    return PurePosixPath(name.replace("\\", "/")).suffix.lower()


def kind_for_upload(sniffed: str, name: str) -> str:
    """The document kind of an upload whose bytes `sniff` typed as `sniffed`.

    The bytes decide, except inside the text family, where one kind of text
    cannot be told from another by its bytes (an Org file is plain text with
    stars): there a name claiming a text format with no sniff kind of its own
    decides. HTML is always a web page, whatever it is named."""
    claimed = BY_EXTENSION.get(extension_of(name))
    if (
        claimed is not None
        and not claimed.sniffed
        and claimed.sniff_family == TEXT_FAMILY
        and sniffed in ("text", "markdown")
    ):
        return claimed.kind
    return _BY_SNIFF[sniffed].kind if sniffed in _BY_SNIFF else sniffed


def synced_kind(name: str) -> str | None:
    """The kind a synced folder reads a file named `name` as, or None to skip it."""
    found = BY_EXTENSION.get(extension_of(name))
    return found.kind if found is not None and found.synced else None


def accepted_types() -> str:
    """The file picker's `accept`: every name a format claims, then extra tokens."""
    tokens = [extension for f in FORMATS for extension in f.extensions]
    tokens += [token for f in FORMATS for token in f.accept]
    return ",".join(dict.fromkeys(tokens))


def kinds_in_group(group: str) -> tuple[str, ...]:
    return tuple(f.kind for f in FORMATS if f.group == group)


def groups() -> tuple[str, ...]:
    return tuple(dict.fromkeys(f.group for f in FORMATS if f.group))


def kind_choices() -> list[tuple[str, str]]:
    return [(f.kind, f.label) for f in FORMATS]


@dataclass(frozen=True)
class ImageSignature:
    """How a raster image's file begins. `read`: the library reads it as an
    image document (OCR, a vision model's description); GIFs are not documents."""

    magic: bytes
    media_type: str
    what: str  # how a refusal names it
    read: bool = True
    # The prefix that types an upload as this image ("" = all of `magic`): a
    # PNG cut short after "\x89PNG" is still typed a PNG, so the image
    # reader says what is wrong with it instead of "not a supported file".
    typed_by: bytes = b""

    @property
    def prefix(self) -> bytes:
        return self.typed_by or self.magic


# Every image signature Jarvis checks, in one table: typing uploads
# (`ingest/filetypes.py`), the type an original downloads with
# (`downloads.py`), a figure's pixels (`ingest/isolated.py`) and the pictures
# a chat sends a model. WebP (RIFF….WEBP) is matched in `image_media_type`: its
# signature is not a prefix. An SVG is a document with script, never a picture.
IMAGE_SIGNATURES: tuple[ImageSignature, ...] = (
    ImageSignature(b"\x89PNG\r\n\x1a\n", "image/png", "a PNG image", typed_by=b"\x89PNG"),
    ImageSignature(b"\xff\xd8\xff", "image/jpeg", "a JPEG image"),
    ImageSignature(b"GIF87a", "image/gif", "a GIF image", read=False),
    ImageSignature(b"GIF89a", "image/gif", "a GIF image", read=False),
    ImageSignature(b"II*\x00", "image/tiff", "a TIFF image"),
    ImageSignature(b"MM\x00*", "image/tiff", "a TIFF image"),
)
WEBP = "image/webp"


def image_media_type(head: bytes) -> str | None:
    """The media type of a raster image starting with `head` (at least 12
    bytes of it), from IMAGE_SIGNATURES; None for anything else."""
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return WEBP
    for signature in IMAGE_SIGNATURES:
        if head.startswith(signature.magic):
            return signature.media_type
    return None
