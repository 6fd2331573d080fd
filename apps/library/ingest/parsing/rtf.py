"""RTF documents with striprtf (pure Python, maintained): the text in order,
paragraphs kept, table cells separated by "|". RTF carries no reliable
heading structure, so the text is packed like a plain text file."""

from __future__ import annotations

import re

from striprtf.striprtf import rtf_to_text

from .archives import reading
from .chunking import pack_text
from .types import ChunkDraft, ParsedDocument, UnreadableDocument

# striprtf walks the file with regular expressions in Python: about 1 s per
# few megabytes. Larger RTF files are nearly always embedded pictures.
MAX_RTF_BYTES = 20 * 1024 * 1024

_CODEPAGE = re.compile(rb"\\ansicpg(\d{3,5})")
_TITLE = re.compile(rb"\{\\title\s+([^{}\\]{1,300})\}")


def extract_rtf(data: bytes, *, filename: str, fallback_title: str) -> ParsedDocument:
    if len(data) > MAX_RTF_BYTES:
        raise UnreadableDocument(
            f"refused: RTF files over {MAX_RTF_BYTES // (1024 * 1024)} MB are not read"
        )
    encoding = _encoding(data[:4096])
    with reading("RTF document"):
        # RTF is 7-bit text with escapes; latin-1 keeps any stray 8-bit byte as itself.
        text = rtf_to_text(data.decode("latin-1"), encoding=encoding, errors="replace")
    chunks = [ChunkDraft(text=piece) for piece in pack_text(text)]
    if not chunks:
        raise UnreadableDocument("the RTF document has no text")
    title_match = _TITLE.search(data[:65536])
    title = title_match.group(1).decode(encoding, "replace").strip() if title_match else ""
    return ParsedDocument(title=(title or fallback_title)[:500], kind="rtf", chunks=chunks)


def _encoding(head: bytes) -> str:
    match = _CODEPAGE.search(head)
    if match:
        name = f"cp{int(match.group(1))}"
        try:
            "".encode(name)
        except LookupError:
            return "cp1252"
        return name
    return "cp1252"
