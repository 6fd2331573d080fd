"""Checks on a ZIP-based document (.docx, .pptx, .xlsx, .odt, .ods) before any
library unpacks it.

The Office libraries read every part of the package into memory, trusting the
sizes the archive declares; a few megabytes of zeros can declare gigabytes.
So the central directory is read first and the file is refused, with a reason
a person can act on, when it holds too many entries, would unpack to too much,
or packs one entry implausibly tightly. Python's zipfile never inflates an
entry past its declared size, so the declared sizes are a real bound.

XML parts may not declare a DTD: no Office or OpenDocument file needs one, and
it is how entity-expansion attacks ("billion laughs") start. lxml and
defusedxml refuse those attacks too; refusing here gives one clear reason
whichever library would have read the part.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager

from .types import UnreadableDocument

MAX_ENTRIES = 10_000
MAX_UNPACKED_BYTES = 300 * 1024 * 1024  # all entries together
MAX_XML_PART_BYTES = 64 * 1024 * 1024  # one XML part: libraries build a tree of it
MAX_RATIO = 100  # XML packs about 5-20x; only a bomb packs a large entry 100x
RATIO_FROM_BYTES = 1024 * 1024  # small entries may pack tighter without harm
XML_HEAD_BYTES = 4096  # where a DTD would have to be

_XML_SUFFIXES = (".xml", ".rels")
_DTD = re.compile(rb"<!(?:DOCTYPE|ENTITY)")
_MB = 1024 * 1024
# What zipfile raises on damaged, encrypted or exotic archives.
ZIP_ERRORS = (zipfile.BadZipFile, ValueError, OSError, EOFError, RuntimeError, NotImplementedError)


def open_checked(data: bytes, *, what: str) -> zipfile.ZipFile:
    """The archive, checked; UnreadableDocument naming `what` ("Word document")
    and the reason otherwise. The caller closes it."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except ZIP_ERRORS as exc:
        raise UnreadableDocument(f"not a readable {what}: damaged archive ({exc})") from None
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
    try:
        with archive.open(info) as entry:
            head = entry.read(XML_HEAD_BYTES)
    except ZIP_ERRORS as exc:
        raise UnreadableDocument(f"not a readable {what}: damaged part {info.filename!r}") from exc
    if _DTD.search(head):
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
    UnreadableDocument naming `what`. Libraries fed hostile files raise
    anything (KeyError, lxml errors, struct.error…), so this catches broadly;
    MemoryError is left alone, for the process that enforces the limit to report."""
    try:
        yield
    except (UnreadableDocument, MemoryError):
        raise
    except Exception as exc:
        detail = " ".join(str(exc).split())[:160] or type(exc).__name__
        raise UnreadableDocument(f"not a readable {what}: {detail}") from exc
