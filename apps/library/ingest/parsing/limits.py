"""Format caps: what a file may cost before Jarvis spends real work on it.

Checked in the parser's child process, before the parser runs (`check_input`:
a PDF's page count, a ZIP's entries, unpacked size and packing ratio, a text
file's size) and after it (`check_output`: passages and bytes of text).
Every refusal names the number, the limit and the setting that changes it,
so the person reading "failed" knows why and an admin knows what to raise.

Pure: no Django, so the sandbox child needs nothing but this and the parsers.
The values come from settings (apps.library.ingest.isolated.parse_limits).
"""

from __future__ import annotations

import io
import logging
import zipfile
from dataclasses import dataclass

from apps.library.formats import format_of

from .types import ParsedDocument, UnreadableDocument

logger = logging.getLogger(__name__)

MB = 1024 * 1024
# Below this unpacked size a high packing ratio harms nobody (a page of
# spaces packs 1000:1); above it, it is how a ZIP bomb looks.
RATIO_FLOOR_BYTES = 1 * MB
READ_CHUNK = 1 << 16
_ZIP_SIGNATURE = b"PK\x03\x04"
# Figure and photo pixels a parse hands back for the vision model (downscaled
# to VISION_MAX_SIDE already, so a real one is well under the first): each
# image, and all of one document's together. Over either, the figure is
# indexed by its caption alone, with a warning.
MAX_FIGURE_IMAGE_BYTES = 8 * MB
MAX_FIGURE_IMAGES_BYTES = 48 * MB


class LimitExceeded(UnreadableDocument):
    """The file is over one of the caps; the message says which and by how much."""


@dataclass(frozen=True)
class ParseLimits:
    max_pdf_pages: int = 2000
    max_unpacked_mb: int = 50
    max_zip_entries: int = 5000
    max_zip_ratio: int = 100
    max_chunks: int = 5000
    max_text_mb: int = 20


def check_input(data: bytes, *, kind: str, limits: ParseLimits) -> None:
    """Refuse, cheaply and before parsing, what would cost too much to parse
    (which cap a kind gets is its row in apps.library.formats)."""
    found = format_of(kind)
    cap = found.cap if found else ""
    if data.startswith(_ZIP_SIGNATURE):
        # Any ZIP-based format (EPUB, and Office files), whatever its kind says.
        check_zip(data, name=found.called if found else "archive", limits=limits)
    if cap == "pdf":
        check_pdf_pages(data, limits=limits)
    elif cap == "text" and len(data) > limits.max_text_mb * MB:
        raise LimitExceeded(
            f"the file holds {_mb(len(data))} of text, over the {limits.max_text_mb} MB limit "
            "(JARVIS_MAX_TEXT_MB)"
        )


def check_pdf_pages(data: bytes, *, limits: ParseLimits) -> None:
    # Imported here: the web process and the worker load these caps with the
    # ingest pipeline, and PyMuPDF (0.4 s with its layout engine) is needed
    # only where a PDF is actually checked, in the parser's child.
    import pymupdf

    try:
        with pymupdf.open(stream=data, filetype="pdf") as doc:
            pages = doc.page_count
    except (pymupdf.FileDataError, RuntimeError, ValueError, pymupdf.mupdf.FzErrorBase):
        return  # not readable: the parser says why in its own words
    if pages > limits.max_pdf_pages:
        raise LimitExceeded(
            f"the PDF has {pages:,} pages, over the {limits.max_pdf_pages:,}-page limit "
            "(JARVIS_MAX_PDF_PAGES)"
        )


def check_zip(data: bytes, *, name: str, limits: ParseLimits) -> None:
    """Entries, unpacked size and packing ratio of a ZIP, from its directory,
    then confirmed by unpacking it (streamed, nothing kept): Python's zipfile
    stops at each entry's declared size and checks its CRC, so a directory that
    understates a bomb's size fails here instead of inside the parser."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError, OSError, EOFError):
        return  # not a readable ZIP: the parser says why in its own words
    with archive:
        entries = archive.infolist()
        if len(entries) > limits.max_zip_entries:
            raise LimitExceeded(
                f"the {name} holds {len(entries):,} files, over the "
                f"{limits.max_zip_entries:,}-file limit (JARVIS_MAX_ZIP_ENTRIES)"
            )
        unpacked = sum(entry.file_size for entry in entries)
        _check_unpacked(unpacked, name=name, limits=limits)
        packed = max(1, sum(entry.compress_size for entry in entries))
        ratio = unpacked / packed
        if unpacked > RATIO_FLOOR_BYTES and ratio > limits.max_zip_ratio:
            raise LimitExceeded(
                f"the {name} unpacks to {ratio:,.0f} times its packed size, over the limit of "
                f"{limits.max_zip_ratio} (JARVIS_MAX_ZIP_RATIO)"
            )
        _unpack_all(archive, entries, name=name)


def _check_unpacked(unpacked: int, *, name: str, limits: ParseLimits) -> None:
    if unpacked > limits.max_unpacked_mb * MB:
        raise LimitExceeded(
            f"the {name} unpacks to {_mb(unpacked)}, over the {limits.max_unpacked_mb} MB limit "
            "(JARVIS_MAX_UNPACKED_MB)"
        )


def _unpack_all(archive: zipfile.ZipFile, entries: list[zipfile.ZipInfo], *, name: str) -> None:
    for entry in entries:
        if entry.is_dir() or entry.flag_bits & 0x1:
            continue  # encrypted entries cannot be read here; the parser reports DRM
        try:
            with archive.open(entry) as member:
                while member.read(READ_CHUNK):
                    pass
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError) as exc:
            # zipfile's own words ("Bad CRC-32 for file …") go to the log only.
            logger.warning("unpacking %s of a %s failed: %s", entry.filename[:80], name, exc)
            raise LimitExceeded(
                f"the {name} is damaged or disguised: its part {entry.filename[:80]} does not "
                "unpack to what the archive declares (save or download it again)"
            ) from None
        except NotImplementedError:
            continue  # an unusual compression method; MuPDF decides


def check_output(parsed: ParsedDocument, *, limits: ParseLimits) -> None:
    """Refuse a parse whose result is too big to index."""
    if len(parsed.chunks) > limits.max_chunks:
        raise LimitExceeded(
            f"the document makes {len(parsed.chunks):,} passages, over the "
            f"{limits.max_chunks:,}-passage limit (JARVIS_MAX_CHUNKS)"
        )
    text = sum(len(chunk.text.encode("utf-8", "surrogatepass")) for chunk in parsed.chunks)
    if text > limits.max_text_mb * MB:
        raise LimitExceeded(
            f"the document holds {_mb(text)} of text, over the {limits.max_text_mb} MB limit "
            "(JARVIS_MAX_TEXT_MB)"
        )


def _mb(size: int) -> str:
    megabytes = size / MB
    return f"{megabytes:,.0f} MB" if megabytes >= 10 else f"{megabytes:,.1f} MB"
