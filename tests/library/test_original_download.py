"""An original is downloaded typed by what Jarvis read it as, never by its
name: a `.js`, `.svg` or `.html` upload never comes back as a script or a
document a browser would run (apps.library.downloads)."""

from __future__ import annotations

import pymupdf
import pytest
from django.test import Client

from apps.library.services.adding import upload_add

pytestmark = pytest.mark.django_db

SCRIPT = b"document.title = 'owned'; fetch('/accounts/logout/', {method: 'POST'});\n"
SVG = (
    b'<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10">'
    b"<script>alert(document.cookie)</script><rect width='10' height='10'/></svg>\n"
)
PAGE = b"<!doctype html><html><head><title>x</title></head><body><script>alert(1)</script>"
PAGE += b"<p>Some text about the garden hedge.</p></body></html>\n"
PNG = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00"
    b"\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00"
    b"\x00\x00\x00IEND\xaeB`\x82"
)
DANGEROUS = ("javascript", "ecmascript", "html", "svg", "xml")


def download(owner, name: str, data: bytes):
    added = upload_add(owner=owner, name=name, data=data)
    document = added.document or added.existing[0]
    client = Client()
    client.force_login(owner)
    response = client.get(f"/library/doc/{document.pk}/original/")
    assert response.status_code == 200, added.error
    return document, response


@pytest.mark.parametrize(
    ("name", "data"), [("evil.js", SCRIPT), ("evil.svg", SVG), ("page.html", PAGE)]
)
def test_a_script_svg_or_html_upload_comes_back_inert(owner, name, data):
    _, response = download(owner, name, data)
    content_type = response["Content-Type"]
    assert not any(word in content_type for word in DANGEROUS), content_type
    assert content_type in ("text/plain; charset=utf-8", "application/octet-stream")
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Content-Disposition"].startswith("attachment")
    assert b"".join(response.streaming_content) == data  # the bytes, unchanged


def test_a_png_is_served_as_the_png_its_bytes_are(owner):
    document, response = download(owner, "picture.png", PNG)
    assert document.kind == "image"
    assert response["Content-Type"] == "image/png"


def test_a_pdf_is_served_as_a_pdf(owner):
    pdf = pymupdf.open()
    pdf.new_page().insert_text((72, 72), "The hedge is trimmed in spring.")
    _, response = download(owner, "hedge.pdf", pdf.tobytes())
    assert response["Content-Type"] == "application/pdf"
    assert response["Content-Disposition"].startswith("attachment")
