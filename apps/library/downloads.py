"""The content type an original is downloaded with: from what Jarvis read it
as (the document's sniffed kind, checked against the file's first bytes),
never from its name.

A name says what its uploader wants it to be: `x.js` guessed as
text/javascript is a same-origin script (`<script src=".../original/">`
passes `script-src 'self'`), `x.svg` and `x.html` are documents that run
script when opened. Every original goes out as an attachment with nosniff;
this only ever names inert types, and anything it cannot vouch for is
application/octet-stream.
"""

from __future__ import annotations

from django.http import FileResponse

from apps.library.models import Document

OCTET_STREAM = "application/octet-stream"
PLAIN_TEXT = "text/plain; charset=utf-8"
HEAD_BYTES = 16

# Kinds read as text (Markdown, plain text, a fetched web page's HTML, CSV):
# their bytes are handed back as text, never as markup.
_TEXT_KINDS = {"note", "text", "web", "csv"}
# Container kinds, each with the signature its bytes must start with.
_BINARY_KINDS = {
    "pdf": (b"%PDF-", "application/pdf"),
    "paper": (b"%PDF-", "application/pdf"),
    "epub": (b"PK\x03\x04", "application/epub+zip"),
    "docx": (
        b"PK\x03\x04",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ),
    "pptx": (
        b"PK\x03\x04",
        "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    ),
    "xlsx": (b"PK\x03\x04", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
    "odt": (b"PK\x03\x04", "application/vnd.oasis.opendocument.text"),
    "ods": (b"PK\x03\x04", "application/vnd.oasis.opendocument.spreadsheet"),
    "rtf": (b"{\\rtf", "application/rtf"),
}
# Raster images only: an SVG is a document with script, not a picture.
_IMAGE_SIGNATURES = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"II*\x00", "image/tiff"),
    (b"MM\x00*", "image/tiff"),
)


def original_content_type(kind: str, head: bytes) -> str:
    """The type for an original of document kind `kind` whose file starts with `head`."""
    if kind in _TEXT_KINDS:
        return PLAIN_TEXT
    if kind in _BINARY_KINDS:
        signature, content_type = _BINARY_KINDS[kind]
        return content_type if head.startswith(signature) else OCTET_STREAM
    if kind == "image":
        if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
            return "image/webp"
        for signature, content_type in _IMAGE_SIGNATURES:
            if head.startswith(signature):
                return content_type
    return OCTET_STREAM


def original_response(document: Document, handle, name: str) -> FileResponse:
    """`handle` (open, binary, at its start) as a download named `name`."""
    head = handle.read(HEAD_BYTES)
    handle.seek(0)
    response = FileResponse(
        handle,
        as_attachment=True,
        filename=name,
        content_type=original_content_type(document.kind, head),
    )
    # Set here too, not only by the middleware: this response must never be sniffed.
    response["X-Content-Type-Options"] = "nosniff"
    return response
