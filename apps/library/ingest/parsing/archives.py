"""Checks on a ZIP-based document (.docx, .pptx, .xlsx, .odt, .ods) before any
library unpacks it.

The Office libraries read every part of the package into memory, trusting the
sizes the archive declares; a few megabytes of zeros can declare gigabytes.
So the central directory is read first and the file is refused, with a reason
a person can act on, when it holds too many entries, would unpack to too much,
or packs one entry implausibly tightly. Python's zipfile never inflates an
entry past its declared size, so the declared sizes are a real bound.

XML parts may not declare entities: no Office or OpenDocument file needs
one, and it is how entity-expansion attacks ("billion laughs") and external
entities start. lxml and defusedxml refuse those attacks too; refusing here
gives one clear reason whichever library would have read the part. A bare
DOCTYPE naming a DTD (LibreOffice writes one into every Basic macro part) is
harmless, since no reader here loads a DTD, and is accepted.

Two kinds of package are made readable before a library opens them
(`as_readable`): templates and slide shows, whose main part python-docx and
python-pptx refuse by its content type although it is the same XML, and
Strict Office Open XML, which names the same elements in other namespaces
(`http://purl.oclc.org/ooxml/...`) that openpyxl and python-docx do not know.
"""

from __future__ import annotations

import io
import logging
import re
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager

from .types import UnreadableDocument

logger = logging.getLogger(__name__)

MAX_ENTRIES = 10_000
MAX_UNPACKED_BYTES = 300 * 1024 * 1024  # all entries together
MAX_XML_PART_BYTES = 64 * 1024 * 1024  # one XML part: libraries build a tree of it
MAX_RATIO = 100  # XML packs about 5-20x; only a bomb packs a large entry 100x
RATIO_FROM_BYTES = 1024 * 1024  # small entries may pack tighter without harm
XML_HEAD_BYTES = 4096  # where a DOCTYPE would have to be
DTD_BYTES = 64 * 1024  # an internal subset longer than this is refused unread

_XML_SUFFIXES = (".xml", ".rels")
_DOCTYPE = re.compile(rb"<!DOCTYPE\b")
_ENTITY = re.compile(rb"<!ENTITY\b")
_INTERNAL_SUBSET = re.compile(rb"<!DOCTYPE\b[^>\[]*\[")
_MB = 1024 * 1024
# What zipfile raises on damaged, encrypted or exotic archives.
ZIP_ERRORS = (zipfile.BadZipFile, ValueError, OSError, EOFError, RuntimeError, NotImplementedError)


def open_checked(data: bytes, *, what: str) -> zipfile.ZipFile:
    """The archive, checked; UnreadableDocument naming `what` ("Word document")
    and the reason otherwise. The caller closes it."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except ZIP_ERRORS as exc:
        logger.warning("opening a %s failed: %s", what, exc)
        raise UnreadableDocument(
            f"not a readable {what}: the package is damaged or truncated "
            "(save or download it again)"
        ) from None
    try:
        check_archive(archive, what=what)
    except BaseException:
        archive.close()
        raise
    return archive


def check_archive(archive: zipfile.ZipFile, *, what: str) -> None:
    infos = archive.infolist()
    if len(infos) > MAX_ENTRIES:
        raise UnreadableDocument(
            f"refused: the {what} holds {len(infos):,} parts (more than {MAX_ENTRIES:,})"
        )
    total = 0
    for info in infos:
        if info.flag_bits & 0x1:
            raise UnreadableDocument(f"encrypted {what} (password required)")
        total += info.file_size
        if total > MAX_UNPACKED_BYTES:
            raise UnreadableDocument(
                f"refused: the {what} would unpack to more than "
                f"{MAX_UNPACKED_BYTES // _MB} MB (a zip bomb?)"
            )
        if info.file_size > RATIO_FROM_BYTES and info.file_size > MAX_RATIO * max(
            1, info.compress_size
        ):
            raise UnreadableDocument(
                f"refused: part {info.filename!r} of the {what} unpacks "
                f"{info.file_size // max(1, info.compress_size):,} times its packed size "
                "(a zip bomb?)"
            )
        if info.filename.lower().endswith(_XML_SUFFIXES):
            if info.file_size > MAX_XML_PART_BYTES:
                raise UnreadableDocument(
                    f"refused: part {info.filename!r} of the {what} is larger than "
                    f"{MAX_XML_PART_BYTES // _MB} MB of XML"
                )
            _refuse_dtd(archive, info, what)


def _refuse_dtd(archive: zipfile.ZipFile, info: zipfile.ZipInfo, what: str) -> None:
    """Refuse a part whose DOCTYPE declares entities (or whose internal
    subset is too long to check); a DOCTYPE that only names a DTD passes."""
    try:
        with archive.open(info) as entry:
            head = entry.read(XML_HEAD_BYTES)
            if not _DOCTYPE.search(head):
                return
            if _INTERNAL_SUBSET.search(head):
                head += entry.read(DTD_BYTES - len(head))
    except ZIP_ERRORS as exc:
        raise UnreadableDocument(f"not a readable {what}: damaged part {info.filename!r}") from exc
    subset = _INTERNAL_SUBSET.search(head)
    declares = bool(_ENTITY.search(head))
    if subset is not None and b"]" not in head[subset.end() :]:
        declares = True  # an internal subset that does not end where it may be checked
    if declares:
        raise UnreadableDocument(
            f"refused: part {info.filename!r} of the {what} declares XML entities "
            "(an entity-expansion attack?)"
        )


def read_part(archive: zipfile.ZipFile, name: str, *, what: str) -> bytes:
    """One part's bytes (already bounded by `check_archive`)."""
    try:
        return archive.read(name)
    except KeyError:
        raise UnreadableDocument(f"not a readable {what}: it has no {name}") from None
    except ZIP_ERRORS as exc:
        raise UnreadableDocument(f"not a readable {what}: damaged part {name!r}") from exc


@contextmanager
def reading(what: str) -> Iterator[None]:
    """Turn whatever a third-party reader raises on a malformed file into
    UnreadableDocument naming `what`, in words a person can act on; the
    library's own message goes to the log (it means something to a developer,
    "<class 'openpyxl.styles.named_styles._NamedCellStyle'>.name should be
    <class 'str'>", not to the person). Libraries fed hostile files raise
    anything (KeyError, lxml errors, struct.error…), so this catches broadly;
    MemoryError is left alone, for the process that enforces the limit to report."""
    try:
        yield
    except (UnreadableDocument, MemoryError):
        raise
    except Exception as exc:
        detail = " ".join(str(exc).split())[:300] or type(exc).__name__
        logger.warning("reading a %s failed: %s: %s", what, type(exc).__name__, detail)
        raise UnreadableDocument(f"not a readable {what}: {_plain_reason(exc)}") from exc


def _plain_reason(exc: Exception) -> str:
    name = type(exc).__name__
    if isinstance(exc, zipfile.BadZipFile):
        return "the package is damaged or truncated (save it again)"
    if isinstance(exc, KeyError) or "no item named" in str(exc):
        return "a part it refers to is missing (save it again)"
    if name in ("XMLSyntaxError", "ParseError", "ExpatError", "SAXParseException"):
        return "one of its parts is not well-formed XML (save it again)"
    return (
        "a part of it is damaged or written in a form Jarvis cannot read (save it again, or as PDF)"
    )


def as_readable(data: bytes) -> bytes:
    """The package, with what the readers refuse put right (see the module's
    docstring): the bytes themselves when nothing needs changing, else a
    new package in memory (the parts are already checked and bounded)."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        names = archive.namelist()
        content_types = archive.read(CONTENT_TYPES) if CONTENT_TYPES in names else b""
        rels = archive.read(PACKAGE_RELS) if PACKAGE_RELS in names else b""
        retype = any(old in content_types for old, _ in _RETYPED)
        strict = STRICT_PREFIX in rels
        if not retype and not strict:
            return data
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as rebuilt:
            for info in archive.infolist():
                part = archive.read(info)
                if info.filename == CONTENT_TYPES:
                    for old, new in _RETYPED:
                        part = part.replace(old, new)
                if strict and info.filename.lower().endswith(_XML_SUFFIXES):
                    part = _STRICT_URI.sub(_transitional, part)
                rebuilt.writestr(info.filename, part)
    return out.getvalue()


CONTENT_TYPES = "[Content_Types].xml"
PACKAGE_RELS = "_rels/.rels"
# A template's or a slide show's main part is the document's own XML; the
# readers accept it under the document's content type.
_RETYPED = (
    (b"wordprocessingml.template.main+xml", b"wordprocessingml.document.main+xml"),
    (b"presentationml.template.main+xml", b"presentationml.presentation.main+xml"),
    (b"presentationml.slideshow.main+xml", b"presentationml.presentation.main+xml"),
)
STRICT_PREFIX = b"http://purl.oclc.org/ooxml/"
_STRICT_URI = re.compile(rb"http://purl\.oclc\.org/ooxml/(\w+)/(\w+)")
# Strict names that are not simply "<area>/2006/<name>" in Transitional.
_TRANSITIONAL_NAMES = {
    (b"officeDocument", b"extendedProperties"): b"officeDocument/2006/extended-properties",
    (b"officeDocument", b"customProperties"): b"officeDocument/2006/custom-properties",
}


def _transitional(match: re.Match[bytes]) -> bytes:
    """A Strict namespace or relationship URI as its Transitional twin
    (ECMA-376 Part 1): purl.oclc.org/ooxml/spreadsheetml/main ->
    schemas.openxmlformats.org/spreadsheetml/2006/main."""
    area, name = match.group(1), match.group(2)
    path = _TRANSITIONAL_NAMES.get((area, name), area + b"/2006/" + name)
    return b"http://schemas.openxmlformats.org/" + path
