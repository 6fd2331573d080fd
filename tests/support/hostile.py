"""Hostile files, generated in the test: what a malicious household member
would upload (issue 11). Each is small on disk and expensive to open."""

from __future__ import annotations

import io
import zipfile

import pymupdf

MB = 1024 * 1024

CONTAINER = (
    '<?xml version="1.0"?><container version="1.0" '
    'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
    '<rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
    "</rootfiles></container>"
)
PACKAGE = (
    '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
    "<metadata xmlns:dc='http://purl.org/dc/elements/1.1/'><dc:title>Bomb</dc:title></metadata>"
    '<manifest><item id="c1" href="ch1.xhtml" media-type="application/xhtml+xml"/></manifest>'
    '<spine><itemref idref="c1"/></spine></package>'
)


def epub_bomb(unpacked_mb: int = 60) -> bytes:
    """An EPUB of a few hundred KB whose one chapter unpacks to `unpacked_mb` MB
    of XHTML (the issue's 184 KB book that held the worker for 14 minutes)."""
    paragraph = b"<p>" + b"lorem ipsum dolor " * 60 + b"</p>\n"
    head = b'<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><body>'
    repeats = (unpacked_mb * MB - len(head)) // len(paragraph) + 1
    chapter = head + paragraph * repeats + b"</body></html>"
    return _epub({"OEBPS/ch1.xhtml": chapter})


def small_epub(text: str = "A short chapter about quinces.") -> bytes:
    chapter = (
        '<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><body>'
        f"<h1>One</h1><p>{text}</p></body></html>"
    ).encode()
    return _epub({"OEBPS/ch1.xhtml": chapter})


def _epub(chapters: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        archive.writestr("META-INF/container.xml", CONTAINER, compress_type=zipfile.ZIP_DEFLATED)
        archive.writestr("OEBPS/content.opf", PACKAGE, compress_type=zipfile.ZIP_DEFLATED)
        for name, data in chapters.items():
            archive.writestr(name, data, compress_type=zipfile.ZIP_DEFLATED, compresslevel=9)
    return buffer.getvalue()


def pdf_with_pages(pages: int, text: str = "Page of a very long report.") -> bytes:
    """A PDF of `pages` pages, made with PyMuPDF's object API: one page is
    drawn, the rest are copies of its object listed in the page tree (adding
    pages one by one is quadratic in MuPDF and takes minutes at 10,000)."""
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 72), text, fontsize=9)
    first = page.xref
    tree = int(doc.xref_get_key(first, "Parent")[1].split()[0])
    template = doc.xref_object(first, compressed=True)
    kids = [first]
    for _ in range(pages - 1):
        xref = doc.get_new_xref()
        doc.update_object(xref, template)
        kids.append(xref)
    doc.xref_set_key(tree, "Kids", "[" + " ".join(f"{k} 0 R" for k in kids) + "]")
    doc.xref_set_key(tree, "Count", str(len(kids)))
    data = doc.tobytes()
    doc.close()
    return data


def huge_page_pdf(side: float = 14400) -> bytes:
    """One 14,400 by 14,400 pt page (200 inches square; an 836-byte file in the
    issue): rendered at the old fixed zoom it was a 26,000-pixel square."""
    doc = pymupdf.open()
    page = doc.new_page(width=side, height=side)
    page.insert_text((72, 72), "A very large page.", fontsize=48)
    data = doc.tobytes()
    doc.close()
    return data


def text_pdf(pages: int, title: str) -> bytes:
    """An ordinary PDF with real text on every page (about two passages each)."""
    doc = pymupdf.open()
    for number in range(pages):
        page = doc.new_page()
        lines = [f"{title}, page {number}."] + [
            f"Observation {number}.{i}: soil moisture {i * 3 % 41} percent at depth {i} cm."
            for i in range(40)
        ]
        page.insert_text((50, 60), "\n".join(lines), fontsize=9)
    doc.set_metadata({"title": title})
    data = doc.tobytes()
    doc.close()
    return data
