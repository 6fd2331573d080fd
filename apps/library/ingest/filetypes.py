"""What kind of file an upload is, decided by its bytes rather than its name.

A name is only a claim: `sniff` reads the magic numbers and the text itself,
and refuses a file whose known extension disagrees with what the bytes are
("named .pdf but the bytes are a Windows program"). HTML, Markdown, CSV and
plain text are one family: a `.txt` holding HTML is HTML, a `.md` without any
Markdown syntax is still Markdown, a `.csv` is CSV when its lines split into
the same number of columns. A missing or unknown extension is typed by the
bytes alone. Images (PNG, JPEG, WebP, HEIC, TIFF) are one family too.

Office files are ZIP packages: an OpenDocument file names its type in its
`mimetype` entry, an Office Open XML file in `[Content_Types].xml` (the
content type of its main part), so a .docx renamed .zip is still a .docx and
a ZIP renamed .docx is refused.

Pure and fast: only the first few kilobytes are examined for signatures and
HTML; the text is decoded once to check it is UTF-8 (which is what the text
parsers will need anyway). A ZIP is opened in memory only to read its
directory and its tiny `mimetype` / `[Content_Types].xml` entries, never to
extract anything else.
"""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import PurePosixPath

import defusedxml.ElementTree as SafeET
from defusedxml import DefusedXmlException
from PIL import features

from apps.library import formats
from apps.library.ingest.textshapes import has_markdown, looks_like_html, looks_tabular

KINDS = (
    "pdf", "epub", "html", "markdown", "text", "csv", "rtf",
    "docx", "pptx", "xlsx", "odt", "ods", "image",
)  # fmt: skip


class UnsupportedFile(Exception):
    """The upload is refused; the message is the per-file reason shown to the person."""


# The family each known extension claims (html, markdown, csv and text share
# "text"), from the one table of formats.
_EXTENSION_FAMILY = {extension: f.sniff_family for extension, f in formats.BY_EXTENSION.items()}
# Kinds Jarvis does not read, by the name's extension: what to save them as,
# for a refusal whose bytes did not already say (docs/library.md promises it).
_SAVE_AS = {
    ".doc": ".docx",
    ".dot": ".docx",
    ".docm": ".docx",
    ".dotm": ".docx",
    ".wps": ".docx",
    ".wpd": ".docx",
    ".pages": "PDF or .docx",
    ".xls": ".xlsx",
    ".xlt": ".xlsx",
    ".xlsb": ".xlsx",
    ".numbers": ".xlsx",
    ".ppt": ".pptx",
    ".pps": ".pptx",
    ".pot": ".pptx",
    ".pptm": ".pptx",
    ".ppsm": ".pptx",
    ".potm": ".pptx",
    ".key": "PDF or .pptx",
    ".odp": ".pptx or PDF",
    ".odg": "PDF",
    ".vsd": "PDF",
    ".vsdx": "PDF",
    ".pub": "PDF",
    ".msg": "PDF",
    ".xps": "PDF",
    ".oxps": "PDF",
    ".djvu": "PDF",
}
_MARKDOWN_EXTENSIONS = (".md", ".markdown")
_CSV_EXTENSIONS = (".csv", ".tsv")
_TEXT_KINDS = ("html", "markdown", "text", "csv")
# How a kind is named when the extension claimed something else.
_KIND_NAMES = {
    "pdf": "a PDF",
    "epub": "an EPUB e-book",
    "html": "a web page (HTML)",
    "markdown": "Markdown text",
    "text": "plain text",
    "csv": "a CSV table",
    "rtf": "an RTF document",
    "docx": "a Word document",
    "pptx": "a PowerPoint presentation",
    "xlsx": "an Excel spreadsheet",
    "odt": "an OpenDocument text",
    "ods": "an OpenDocument spreadsheet",
    "image": "an image",
}


def family(kind: str) -> str:
    """html, markdown, csv and text are one family; every other kind is its own."""
    return "text" if kind in _TEXT_KINDS else kind


PDF_HEADER_WINDOW = 1024  # readers accept the %PDF- header anywhere in the first KB
TEXT_SAMPLE = 8192  # bytes checked for NULs and control characters
MARKDOWN_SAMPLE = 65536  # characters searched for Markdown syntax
MAX_CONTROL_FRACTION = 0.01
MAX_MIMETYPE_BYTES = 100
MAX_CONTENT_TYPES_BYTES = 256 * 1024
CSV_SAMPLE = 16384

_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_EPUB_MIMETYPE = b"application/epub+zip"

# (prefix, what it is), checked in order at offset 0. A prefix of printable
# characters alone could begin a note ("ID3 tags explained"), so for those the
# header must also hold bytes that never occur in text (see _binary_signature).
# The raster images come from the one table of them (apps.library.formats).
_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    *((image.prefix, image.what) for image in formats.IMAGE_SIGNATURES),
    (b"\x00\x00\x01\x00", "an icon image"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an Office document"),  # .doc/.xls/.ppt
    (b"{\\rtf", "an RTF document"),
    (b"MZ", "a Windows program"),
    (b"\x7fELF", "a Linux program"),
    (b"\xcf\xfa\xed\xfe", "a macOS program"),
    (b"\xce\xfa\xed\xfe", "a macOS program"),
    (b"\xca\xfe\xba\xbe", "a macOS program"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"BZh", "a bzip2 archive"),
    (b"\xfd7zXZ\x00", "an xz archive"),
    (b"(\xb5/\xfd", "a zstd archive"),
    (b"7z\xbc\xaf'\x1c", "a 7-Zip archive"),
    (b"Rar!\x1a\x07", "a RAR archive"),
    (b"SQLite format 3\x00", "an SQLite database"),
    (b"OggS", "an audio file"),
    (b"fLaC", "an audio file"),
    (b"ID3", "an audio file"),
    (b"\xff\xfb", "an audio file"),  # MP3 frames without an ID3 tag
    (b"\xff\xf3", "an audio file"),
    (b"\xff\xf2", "an audio file"),
    (b"\x1aE\xdf\xa3", "a video file"),  # Matroska / WebM
    (b"wOFF", "a font file"),
    (b"wOF2", "a font file"),
)
_RIFF_FORMS = {b"WEBP": "a WebP image", b"WAVE": "an audio file", b"AVI ": "a video file"}
_ZIP_SIGNATURES = (b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08")
_HEIF_BRANDS = (b"heic", b"heix", b"hevc", b"heim", b"heis", b"mif1", b"msf1")
# Images Jarvis reads (OCR, and a vision model's description); GIFs and icons are
# not documents, and AVIF only where this Pillow reads it.
_IMAGE_SIGNATURES = tuple(image.prefix for image in formats.IMAGE_SIGNATURES if image.read)
_RTF_SIGNATURE = b"{\\rtf"
_OPENDOCUMENT = {
    b"application/vnd.oasis.opendocument.text": "odt",
    b"application/vnd.oasis.opendocument.spreadsheet": "ods",
}
_OOXML_MAIN = {
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml": "docx",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.template.main+xml": "docx",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml": "pptx",
    "application/vnd.openxmlformats-officedocument.presentationml.slideshow.main+xml": "pptx",
    "application/vnd.openxmlformats-officedocument.presentationml.template.main+xml": "pptx",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml": "xlsx",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.template.main+xml": "xlsx",
    # Macros are never run, and openpyxl reads these workbooks' cells as any other.
    "application/vnd.ms-excel.sheet.macroEnabled.main+xml": "xlsx",
    "application/vnd.ms-excel.template.macroEnabled.main+xml": "xlsx",
}
# Packages refused, each saying what to save it as.
_OOXML_REFUSED = {
    "application/vnd.ms-word.document.macroEnabled.main+xml":
        "a macro-enabled Word document (save it as .docx)",
    "application/vnd.ms-word.template.macroEnabledTemplate.main+xml":
        "a macro-enabled Word template (save it as .docx)",
    "application/vnd.ms-powerpoint.presentation.macroEnabled.main+xml":
        "a macro-enabled presentation (save it as .pptx)",
    "application/vnd.ms-powerpoint.slideshow.macroEnabled.main+xml":
        "a macro-enabled slide show (save it as .pptx)",
    "application/vnd.ms-powerpoint.template.macroEnabled.main+xml":
        "a macro-enabled presentation template (save it as .pptx)",
    "application/vnd.ms-powerpoint.addin.macroEnabled.main+xml":
        "a PowerPoint add-in, not a presentation (save the presentation as .pptx)",
    "application/vnd.ms-excel.sheet.binary.macroEnabled.main":
        "an Excel binary workbook (save it as .xlsx)",
    "application/vnd.ms-excel.addin.macroEnabled.main+xml":
        "an Excel add-in, not a workbook (save the workbook as .xlsx)",
    "application/vnd.ms-visio.drawing.main+xml": "a Visio drawing (save it as PDF)",
    "application/vnd.ms-visio.drawing.macroEnabled.main+xml": "a Visio drawing (save it as PDF)",
    "application/vnd.ms-visio.template.main+xml": "a Visio template (save it as PDF)",
    "application/vnd.openxmlformats-officedocument.theme+xml":
        "an Office theme (colours and fonts, no text; save the document itself as "
        ".docx, .pptx or .xlsx)",
    "application/vnd.ms-office.theme+xml":
        "an Office theme (colours and fonts, no text; save the document itself as "
        ".docx, .pptx or .xlsx)",
}  # fmt: skip
_OOXML_UNKNOWN = "an Office document of an unknown kind (save it as .docx, .xlsx or .pptx)"
# Content types are named in the 2006 ECMA namespace, or in Microsoft's
# pre-standard one (Office 2007 betas, some themes).
_CONTENT_TYPES_NAMESPACES = (
    "{http://schemas.openxmlformats.org/package/2006/content-types}",
    "{http://schemas.microsoft.com/package/2005/06/content-types}",
)
_PACKAGE_RELS = "_rels/.rels"
MAX_RELS_BYTES = 64 * 1024
# The relationship naming the main part, Transitional or Strict.
_OFFICE_DOCUMENT_REL = re.compile(
    rb"""<Relationship\b[^>]*?Type=["'][^"']*/officeDocument["'][^>]*>""", re.S
)
_TARGET = re.compile(rb"""\bTarget=["']([^"']+)["']""")
# An OLE2 container (Office 97-2003) names its streams in UTF-16, each name at
# the start of a 128-byte directory entry and ended by a NUL; the first of
# these found (names compare without regard to case) says what it is, and so
# what to save it as.
_OLE_KINDS = (
    ("EncryptedPackage", "a password-protected Office document (remove the password and save "
                         "it again as .docx, .xlsx or .pptx)"),
    ("WordDocument", "a Word 97-2003 document (save it as .docx)"),
    ("PowerPoint Document", "a PowerPoint 97-2003 presentation (save it as .pptx)"),
    ("Workbook", "an Excel 97-2003 workbook (save it as .xlsx)"),
    ("Book", "an Excel 5 workbook (save it as .xlsx)"),
    ("__substg1.0_", "an Outlook message (save it as PDF, or its attachments on their own)"),
    ("VisioDocument", "a Visio drawing (save it as PDF)"),
    ("Quill", "a Publisher document (save it as PDF)"),
)  # fmt: skip
_OLE_SIGNATURE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_OLE_OTHER = "an older Office document"
_OLE_ENTRY = 128
# A ZIP whose directory is gone still starts with local headers naming its
# parts; these say which kind of document it was meant to be.
_DAMAGED_BY_PART = (
    ("word/", "Word document"),
    ("ppt/", "PowerPoint presentation"),
    ("xl/", "Excel spreadsheet"),
    ("[content_types].xml", "Office document"),
    ("content.xml", "OpenDocument file"),
    ("mimetype", "OpenDocument file"),
)
_OPENDOCUMENT_OTHER = {
    b"application/vnd.oasis.opendocument.presentation":
        "an OpenDocument presentation (save it as .pptx or PDF)",
    b"application/vnd.oasis.opendocument.presentation-template":
        "an OpenDocument presentation template (save it as .pptx or PDF)",
    b"application/vnd.oasis.opendocument.graphics": "an OpenDocument drawing (save it as PDF)",
    b"application/vnd.oasis.opendocument.formula": "an OpenDocument formula (save it as PDF)",
    b"application/vnd.oasis.opendocument.chart": "an OpenDocument chart (save it as PDF)",
    b"application/vnd.oasis.opendocument.text-template": "an OpenDocument text template "
                                                         "(save it as .odt)",
    b"application/vnd.oasis.opendocument.spreadsheet-template": "an OpenDocument spreadsheet "
                                                                "template (save it as .ods)",
    b"application/vnd.oasis.opendocument.text-master": "an OpenDocument master document "
                                                       "(save it as .odt)",
}  # fmt: skip
# What zipfile raises on damaged, encrypted or exotic archives.
_ZIP_ERRORS = (zipfile.BadZipFile, ValueError, OSError, EOFError, RuntimeError, NotImplementedError)
BINARY_HEADER = 64  # where a printable signature must be followed by non-text bytes

# What may come before the first tag of an HTML document.
_CONTROL_BYTES = re.compile(rb"[\x00-\x08\x0e-\x1a\x1c-\x1f]")


def sniff(data: bytes, filename: str) -> str:
    """The kind of `data` (one of KINDS), or UnsupportedFile with the reason.

    `filename` is only used to check the claim its extension makes and to tell
    Markdown from plain text when the text itself does not say.
    """
    # Only a short file can be all whitespace worth catching here (a longer
    # one is caught once decoded), and stripping a large upload would copy it.
    if not data or (len(data) <= TEXT_SAMPLE and not data.strip()):
        raise UnsupportedFile("empty file")
    extension = PurePosixPath(filename.replace("\\", "/")).suffix.lower()
    claimed = _EXTENSION_FAMILY.get(extension)
    try:
        kind = _kind_of(data, extension)
    except _Damaged as exc:
        raise UnsupportedFile(
            f"a damaged or truncated {exc.what}: its package cannot be opened "
            "(save or download it again)"
        ) from None
    except _Binary as exc:
        what = exc.what
        if extension in _SAVE_AS and "save it as" not in what and "save the" not in what:
            what += f" (save it as {_SAVE_AS[extension]})"
        elif what == _OLE_OTHER:
            what += " (save it as .docx, .xlsx or .pptx)"
        if claimed:
            raise UnsupportedFile(f"named {extension} but the bytes are {what}") from None
        raise UnsupportedFile(f"looks like {what}") from None
    except _Undecodable as exc:
        # Text in an encoding we cannot read: under a text name that is the
        # problem to report; under a .pdf or .epub name, the name is wrong.
        if claimed and claimed != "text":
            raise UnsupportedFile(f"named {extension} but the bytes are plain text") from None
        raise UnsupportedFile(str(exc)) from None
    if claimed and claimed != family(kind):
        raise UnsupportedFile(f"named {extension} but the bytes are {_KIND_NAMES[kind]}")
    return kind


class _Binary(Exception):
    """Internal: the bytes are not a document; `what` says what they look like."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


class _Damaged(_Binary):
    """Internal: a document whose package is broken; `what` names the kind."""


class _Undecodable(Exception):
    """Internal: text, but not in an encoding the text parsers read."""


def _kind_of(data: bytes, extension: str) -> str:
    head = data[:PDF_HEADER_WINDOW]
    if _is_pdf(data):
        return "pdf"
    if head.startswith(_ZIP_SIGNATURES):
        return _zip_kind(data, extension)
    if _is_image(head):
        return "image"
    if head.startswith(_RTF_SIGNATURE):
        return "rtf"
    if head.startswith(_OLE_SIGNATURE):
        raise _Binary(_ole_kind(data))
    what = _binary_signature(head)
    if what:
        raise _Binary(what)
    return _text_kind(data, extension)


def _is_pdf(data: bytes) -> bool:
    if data.startswith(b"%PDF-"):
        return True
    # A header a little way in (after a MacBinary or mail prefix) is still a
    # PDF, but a note that merely mentions "%PDF-" is not: require the trailer.
    return b"%PDF-" in data[:PDF_HEADER_WINDOW] and b"%%EOF" in data[-2048:]


def _is_image(head: bytes) -> bool:
    if head.startswith(_IMAGE_SIGNATURES):
        return True
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return True
    if head[4:8] == b"ftyp":
        brand = head[8:12]
        return brand in _HEIF_BRANDS or (brand == b"avif" and bool(features.check("avif")))
    return False


def _binary_signature(head: bytes) -> str:
    binary_header = bool(_CONTROL_BYTES.search(head[:BINARY_HEADER]))
    for prefix, what in _SIGNATURES:
        if head.startswith(prefix) and (binary_header or not _printable(prefix)):
            return what
    if not binary_header:
        return ""
    if head[:4] == b"RIFF":
        return _RIFF_FORMS.get(head[8:12], "a media file")
    if head[4:8] == b"ftyp":
        return "an HEIC image" if head[8:12] in _HEIF_BRANDS else "a video or audio file"
    return ""


def _ole_kind(data: bytes) -> str:
    """What an OLE2 container (Office 97-2003, Outlook, Visio…) holds, with
    what to save it as; from the stream names in its directory."""
    for stream, what in _OLE_KINDS:
        if any(_ole_entry(data, name) for name in {stream, stream.upper(), stream.lower()}):
            return what
    return _OLE_OTHER


def _ole_entry(data: bytes, name: str) -> bool:
    """Whether a directory entry of the container is named `name`."""
    needle = name.encode("utf-16-le") + b"\x00\x00"
    at = data.find(needle)
    while at != -1:
        if at % _OLE_ENTRY == 0:
            return True
        at = data.find(needle, at + 1)
    return False


def _printable(prefix: bytes) -> bool:
    return all(0x20 <= byte < 0x7F for byte in prefix)


def _zip_kind(data: bytes, extension: str = "") -> str:
    """The kind of a ZIP package (EPUB, OpenDocument, Office Open XML); _Binary
    saying what any other ZIP is."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = archive.namelist()
            mimetype = _small_entry(archive, "mimetype") if "mimetype" in names else b""
            content_types = (
                _small_entry(archive, "[Content_Types].xml", MAX_CONTENT_TYPES_BYTES)
                if "[Content_Types].xml" in names
                else None
            )
            rels = (
                _small_entry(archive, _PACKAGE_RELS, MAX_RELS_BYTES)
                if _PACKAGE_RELS in names
                else b""
            )
    except _ZIP_ERRORS:
        # A damaged archive: its first local header still says what it was
        # meant to be, and an EPUB is better refused by the EPUB parser, which
        # can say what is wrong with it.
        if data[30:38] == b"mimetype" and _EPUB_MIMETYPE in data[38:80]:
            return "epub"
        _refuse_damaged(data, extension)
        raise _Binary("a ZIP archive") from None
    mimetype = mimetype.strip()
    if mimetype == _EPUB_MIMETYPE:
        return "epub"
    if mimetype in _OPENDOCUMENT:
        return _OPENDOCUMENT[mimetype]
    if mimetype in _OPENDOCUMENT_OTHER:
        raise _Binary(_OPENDOCUMENT_OTHER[mimetype])
    if mimetype.startswith(b"application/vnd.oasis.opendocument"):
        raise _Binary("an OpenDocument file other than text or a spreadsheet (save it as PDF)")
    if content_types is not None:
        return _ooxml_kind(content_types, names, rels)
    # Parts named "xl\\workbook.xml" or "[content_types].xml": a writer that
    # broke the package's naming rules; no Office reader finds the parts.
    _refuse_damaged_names([name.replace("\\", "/") for name in names])
    raise _Binary("a ZIP archive")


def _refuse_damaged(data: bytes, extension: str) -> None:
    """_Damaged when a ZIP that cannot be opened was a document: its local
    headers name document parts, or its name claims an Office kind."""
    _refuse_damaged_names(_local_names(data))
    claimed = _EXTENSION_FAMILY.get(extension)
    if claimed in ("docx", "pptx", "xlsx", "odt", "ods", "epub"):
        raise _Damaged(_KIND_NAMES[claimed].split(" ", 1)[1])


def _refuse_damaged_names(names: list[str]) -> None:
    for prefix, what in _DAMAGED_BY_PART:
        if any(name.lower().startswith(prefix) for name in names):
            raise _Damaged(what)


def _local_names(data: bytes, limit: int = 64) -> list[str]:
    """The names in the first `limit` local file headers, read in order."""
    names: list[str] = []
    offset = data.find(b"PK\x03\x04")
    while offset >= 0 and len(names) < limit and offset + 30 <= len(data):
        name_length = int.from_bytes(data[offset + 26 : offset + 28], "little")
        names.append(data[offset + 30 : offset + 30 + name_length].decode("cp437", "replace"))
        offset = data.find(b"PK\x03\x04", offset + 30 + name_length)
    return names


def _ooxml_kind(content_types: bytes, names: list[str], rels: bytes = b"") -> str:
    """The Office Open XML kind named by the content type of the package's
    main part: the part `_rels/.rels` points to, typed by its Override or,
    failing one, by the Default for its extension (.NET libraries type every
    .xml part as the main one that way). Without such a pointer, any main
    content type the package declares."""
    try:
        root = SafeET.fromstring(content_types)
    except (SafeET.ParseError, DefusedXmlException):
        raise _Binary(
            "a damaged Office document: its list of parts is not readable "
            "(save it again as .docx, .xlsx or .pptx)"
        ) from None
    overrides: dict[str, str] = {}
    defaults: dict[str, str] = {}
    for namespace in _CONTENT_TYPES_NAMESPACES:
        for element in root.iter(f"{namespace}Override"):
            name = (element.get("PartName") or "").lstrip("/").lower()
            overrides[name] = _bare(element.get("ContentType"))
        for element in root.iter(f"{namespace}Default"):
            defaults[(element.get("Extension") or "").lower()] = _bare(element.get("ContentType"))
    main = _main_part(rels)
    candidates = []
    if main:
        extension = main.rsplit(".", 1)[-1] if "." in main.rsplit("/", 1)[-1] else ""
        candidates.append(overrides.get(main) or defaults.get(extension, ""))
    candidates += [*overrides.values(), *defaults.values()]
    for content_type in candidates:
        if content_type in _OOXML_MAIN:
            return _OOXML_MAIN[content_type]
        if content_type in _OOXML_REFUSED:
            raise _Binary(_OOXML_REFUSED[content_type])
    if any(name.startswith(("word/", "xl/", "ppt/")) for name in names):
        raise _Binary(_OOXML_UNKNOWN)
    raise _Binary("an Office Open XML package that is not a document Jarvis reads")


def _bare(content_type: str | None) -> str:
    # "application/x-resqml+xml;version=2.0" names its parameters after a ";".
    return (content_type or "").split(";", 1)[0].strip()


def _main_part(rels: bytes) -> str:
    """The package's main part as named in `_rels/.rels` ("word/document.xml"),
    lower-cased, or "" when it names none."""
    match = _OFFICE_DOCUMENT_REL.search(rels)
    target = _TARGET.search(match.group()) if match else None
    if target is None:
        return ""
    return target.group(1).decode("utf-8", "replace").lstrip("/").lower()


def _small_entry(archive: zipfile.ZipFile, name: str, limit: int = MAX_MIMETYPE_BYTES) -> bytes:
    info = archive.getinfo(name)
    if info.file_size > limit:
        return b""
    with archive.open(info) as entry:
        return entry.read(limit)


def _text_kind(data: bytes, extension: str) -> str:
    if data.startswith(_UTF16_BOMS):
        return _utf16_kind(data)
    sample = data[:TEXT_SAMPLE]
    if (
        b"\x00" in sample
        or len(_CONTROL_BYTES.findall(sample)) > len(sample) * MAX_CONTROL_FRACTION
    ):
        raise _Binary("binary data")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        # HTML says which encoding it is in (the HTML parser reads <meta charset>);
        # anything else must be UTF-8 for the text parsers.
        if looks_like_html(sample.decode("latin-1")):
            return "html"
        raise _Undecodable("not UTF-8 text") from None
    if not text.strip():
        raise UnsupportedFile("empty file")
    if looks_like_html(text[:TEXT_SAMPLE]):
        return "html"
    if extension in _CSV_EXTENSIONS and looks_tabular(text[:CSV_SAMPLE]):
        return "csv"
    if extension in _MARKDOWN_EXTENSIONS or has_markdown(text[:MARKDOWN_SAMPLE]):
        return "markdown"
    return "text"


def _utf16_kind(data: bytes) -> str:
    text = data[:TEXT_SAMPLE].decode("utf-16", errors="replace")
    if looks_like_html(text):
        return "html"  # the HTML parser honours the BOM
    raise _Undecodable("UTF-16 text; save it as UTF-8")
