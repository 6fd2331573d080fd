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

from apps.library.formats import format_of, image_media_type
from apps.library.models import Document

OCTET_STREAM = "application/octet-stream"
PLAIN_TEXT = "text/plain; charset=utf-8"
HEAD_BYTES = 16


def original_content_type(kind: str, head: bytes) -> str:
    """The type for an original of document kind `kind` whose file starts with `head`."""
    found = format_of(kind)
    download = found.download if found else None
    if download == "text":
        return PLAIN_TEXT
    if download == "image":
        # Raster images only (formats.IMAGE_SIGNATURES): an SVG is a document with script.
        media_type = image_media_type(head)
        if media_type is not None:
            return media_type
    elif download is not None:
        signature, content_type = download
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
