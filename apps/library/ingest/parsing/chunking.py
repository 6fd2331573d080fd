"""Packing text into chunks: blocks (paragraphs, lists, code fences) are packed
up to a size budget; a block too large on its own is split at sentence, line
or word boundaries. Consecutive chunks of one section overlap a little so a
fact that straddles the cut is still whole in one of them."""

from __future__ import annotations

import re

TARGET_CHARS = 900
MAX_CHARS = 1200
OVERLAP_CHARS = 150

_FENCE = re.compile(r"^\s*(```|~~~)")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])")


def split_blocks(text: str) -> list[str]:
    """Blank-line separated blocks; a fenced code block is one block whatever it holds."""
    blocks: list[str] = []
    current: list[str] = []
    in_fence = False
    for line in text.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
            current.append(line)
            continue
        if not in_fence and not line.strip():
            if current:
                blocks.append("\n".join(current).strip("\n"))
                current = []
            continue
        current.append(line)
    if current:
        blocks.append("\n".join(current).strip("\n"))
    return [b for b in blocks if b.strip()]


def _split_long(block: str, limit: int) -> list[str]:
    """Cut one oversized block at the gentlest boundary that fits."""
    for pattern in (_SENTENCE_END, re.compile(r"\n"), re.compile(r"\s+")):
        pieces = [p for p in pattern.split(block) if p.strip()]
        if len(pieces) > 1 and all(len(p) <= limit for p in pieces):
            return _pack(pieces, limit, joiner=" " if pattern.pattern == r"\s+" else "\n")
        if len(pieces) > 1:
            out: list[str] = []
            for piece in pieces:
                out.extend(_split_long(piece, limit) if len(piece) > limit else [piece])
            return _pack(out, limit, joiner="\n")
    # A single unbroken token longer than the limit (a URL, base64): hard cut.
    return [block[i : i + limit] for i in range(0, len(block), limit)]


def _pack(pieces: list[str], limit: int, joiner: str) -> list[str]:
    packed: list[str] = []
    current = ""
    for piece in pieces:
        candidate = f"{current}{joiner}{piece}" if current else piece
        if len(candidate) <= limit:
            current = candidate
        else:
            if current:
                packed.append(current)
            current = piece
    if current:
        packed.append(current)
    return packed


def _overlap_tail(text: str) -> str:
    """The end of a chunk to repeat at the start of the next: whole words only."""
    if len(text) <= OVERLAP_CHARS:
        return ""
    tail = text[-OVERLAP_CHARS:]
    cut = tail.find(" ")
    return tail[cut + 1 :] if cut != -1 else ""


def without_overlap(previous: str, text: str) -> str:
    """`text` without the words it repeats from the end of `previous` (the
    overlap pack_text adds), for showing consecutive chunks as one text."""
    if not text.startswith("… ") or not previous:
        return text
    end, body = previous.rstrip(), text[2:]
    # The repeated tail may itself cross a paragraph break: try each break
    # within the overlap's length, shortest head first.
    at = body.find("\n\n")
    while 0 <= at <= OVERLAP_CHARS:
        head = body[:at].strip()
        if head and end.endswith(head):
            return body[at + 2 :]
        at = body.find("\n\n", at + 2)
    return text


def pack_text(text: str) -> list[str]:
    """Chunks of at most MAX_CHARS (plus overlap) covering all of `text` in order."""
    blocks: list[str] = []
    for block in split_blocks(text):
        blocks.extend(_split_long(block, TARGET_CHARS) if len(block) > MAX_CHARS else [block])
    chunks: list[str] = []
    current = ""
    for block in blocks:
        candidate = f"{current}\n\n{block}" if current else block
        if len(candidate) <= TARGET_CHARS or not current:
            current = candidate
            continue
        chunks.append(current)
        tail = _overlap_tail(current)
        current = f"… {tail}\n\n{block}" if tail else block
    if current:
        chunks.append(current)
    return chunks
