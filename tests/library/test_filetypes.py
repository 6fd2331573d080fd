"""Typing uploads by their bytes: every sample is real bytes built here, each
tried under its right name, a lying name and no name at all."""

from __future__ import annotations

import io
import zipfile

import pymupdf
import pytest

from apps.library.ingest.filetypes import KINDS, UnsupportedFile, sniff
from tests.library.test_html_epub import build_epub
from tests.support.documents import docx_bytes, pptx_bytes, xlsx_bytes


def make_pdf() -> bytes:
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 100), "Boiler service receipt", fontsize=11)
    return doc.tobytes()


def make_zip(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return buffer.getvalue()


PDF = make_pdf()
EPUB = build_epub([("Chapter One", ["The well is forty metres deep."])])
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00"
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00\xff\xdb\x00C\x00"
GIF = b"GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00!\xf9\x04\x01\x00\x00\x00\x00,"
ZIP = make_zip({"notes/a.txt": "hello", "notes/b.txt": "world"})
WEBP = b"RIFF\x24\x00\x00\x00WEBPVP8 \x18\x00\x00\x00" + b"\x00" * 24
HEIC = b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic" + b"\x00" * 16
TIFF = b"II*\x00\x08\x00\x00\x00" + b"\x00" * 24
REAL_DOCX = docx_bytes(title="Letter", sections=[("Hello", ["The boiler is fixed."])])
REAL_PPTX = pptx_bytes([("Budget", "Heating", "")])
REAL_XLSX = xlsx_bytes({"Budget": [["Item", "Amount"], ["Gas", 81]]})
DOCM = make_zip(
    {
        "[Content_Types].xml": '<Types xmlns="http://schemas.openxmlformats.org/package/2006/'
        'content-types"><Override PartName="/word/document.xml" ContentType="application/'
        'vnd.ms-word.document.macroEnabled.main+xml"/></Types>',
        "word/document.xml": "<w:document/>",
    }
)
ODT = make_zip({"mimetype": "application/vnd.oasis.opendocument.text", "content.xml": "<x/>"})
ODS = make_zip(
    {"mimetype": "application/vnd.oasis.opendocument.spreadsheet", "content.xml": "<x/>"}
)
ODP = make_zip(
    {"mimetype": "application/vnd.oasis.opendocument.presentation", "content.xml": "<x/>"}
)
RTF = b"{\\rtf1\\ansi\\deff0 {\\fonttbl {\\f0 Times;}} Hello\\par}"
CSV = b"name,phone\nPlumber,0123 456\nElectrician,0987 654\n"
CSV_SEMICOLON = b"Datum;Betrag;Zweck\n01.03.2026;-81,50;Gas\n02.03.2026;-950,00;Miete\n"
DOCX = make_zip({"[Content_Types].xml": "<Types/>", "word/document.xml": "<w:document/>"})
EXE = (
    b"MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff\x00\x00"
    + b"\x00" * 48
    + (b"This program cannot be run in DOS mode.\r\r\n$")
)
ELF = b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 8 + b"\x02\x00>\x00\x01\x00\x00\x00"
HTML = (
    "\ufeff<!-- saved from url=(0031)https://kitchenlab.example/ -->\n"
    "  <!DOCTYPE html>\n<html><head><title>Descaling</title></head>"
    "<body><p>Use citric acid, never vinegar.</p></body></html>"
).encode()
HTML_BARE = b"\n\n<HTML>\n<BODY><P>Opening hours: 9 to 5.</P></BODY></HTML>"
HTML_LATIN1 = (
    '<html><head><meta charset="iso-8859-1"></head><body><p>Le café</p></body></html>'
).encode("latin-1")
MARKDOWN = b"# Groceries\n\n- milk\n- coffee beans\n"
WIKILINKS = b"See [[Boiler]] and [[Heating|the heating note]] for the codes.\n"
FRONTMATTER = b"---\ntags:\n  - house\n---\nThe gate code changed in May.\n"
TEXT = "Wi-Fi password is on the router; café downstairs opens at 7.\n".encode()
MENTIONS_PDF = b"To check a file, look for %PDF- in its first bytes.\n"
ID3_NOTE = b"ID3 tags explained: artist, album and year live in the header.\n"
LATIN1 = "Le café est ouvert.\n".encode("latin-1")
UTF16 = "Le café est ouvert.\n".encode("utf-16")

CASES = [
    # (bytes, filename, expected kind or exact message)
    (PDF, "receipt.pdf", "pdf"),
    (PDF, "RECEIPT.PDF", "pdf"),
    (PDF, "receipt", "pdf"),
    (PDF, "receipt.bin", "pdf"),
    (PDF, "receipt.md", "named .md but the bytes are a PDF"),
    (PDF, "receipt.epub", "named .epub but the bytes are a PDF"),
    (EPUB, "book.epub", "epub"),
    (EPUB, "book", "epub"),
    (EPUB, "book.zip", "epub"),
    (EPUB, "book.pdf", "named .pdf but the bytes are an EPUB e-book"),
    (EPUB, "book.txt", "named .txt but the bytes are an EPUB e-book"),
    (PNG, "photo.png", "image"),
    (PNG, "photo", "image"),
    (PNG, "photo.jpg", "image"),  # one family: the image reader does not care
    (PNG, "photo.html", "named .html but the bytes are an image"),
    (PNG[:4], "photo.png", "image"),  # cut short: the image reader says what is wrong
    (JPEG, "photo.jpg", "image"),
    (JPEG, "photo.JPEG", "image"),
    (JPEG, "photo.pdf", "named .pdf but the bytes are an image"),
    (WEBP, "photo.webp", "image"),
    (HEIC, "IMG_0042.HEIC", "image"),
    (TIFF, "scan.tif", "image"),
    (TIFF, "scan.docx", "named .docx but the bytes are an image"),
    (GIF, "anim.gif", "looks like a GIF image"),
    (GIF, "anim.md", "named .md but the bytes are a GIF image"),
    (ZIP, "notes.zip", "looks like a ZIP archive"),
    (ZIP, "notes.epub", "named .epub but the bytes are a ZIP archive"),
    (
        DOCX,
        "letter.docx",
        "named .docx but the bytes are an Office document of an unknown kind (save it as .docx, .xlsx or .pptx)",
    ),
    (
        DOCX,
        "letter.pdf",
        "named .pdf but the bytes are an Office document of an unknown kind (save it as .docx, .xlsx or .pptx)",
    ),
    (REAL_DOCX, "letter.docx", "docx"),
    (REAL_DOCX, "letter.zip", "docx"),  # typed by what the package says, not its name
    (REAL_DOCX, "letter", "docx"),
    (REAL_DOCX, "letter.xlsx", "named .xlsx but the bytes are a Word document"),
    (REAL_DOCX, "letter.pdf", "named .pdf but the bytes are a Word document"),
    (ZIP, "letter.docx", "named .docx but the bytes are a ZIP archive"),
    (REAL_PPTX, "talk.pptx", "pptx"),
    (REAL_PPTX, "talk.docx", "named .docx but the bytes are a PowerPoint presentation"),
    (REAL_XLSX, "budget.xlsx", "xlsx"),
    (REAL_XLSX, "budget.xlsm", "xlsx"),
    (DOCM, "macros.docm", "looks like a macro-enabled Word document (save it as .docx)"),
    (ODT, "letter.odt", "odt"),
    (ODT, "letter.ods", "named .ods but the bytes are an OpenDocument text"),
    (ODS, "budget.ods", "ods"),
    (ODP, "talk.odp", "looks like an OpenDocument presentation (save it as .pptx or PDF)"),
    (RTF, "letter.rtf", "rtf"),
    (RTF, "letter", "rtf"),
    (RTF, "letter.txt", "named .txt but the bytes are an RTF document"),
    (CSV, "phones.csv", "csv"),
    (CSV_SEMICOLON, "konto.csv", "csv"),
    (CSV, "phones.txt", "text"),  # a delimited .txt stays text: only a .csv name asks
    (TEXT, "notes.csv", "text"),  # named .csv but not a table: read as text
    (EXE, "setup.exe", "looks like a Windows program"),
    (EXE, "invoice.pdf", "named .pdf but the bytes are a Windows program"),
    (EXE, "invoice", "looks like a Windows program"),
    (ELF, "tool", "looks like a Linux program"),
    (ELF, "tool.txt", "named .txt but the bytes are a Linux program"),
    (HTML, "page.html", "html"),
    (HTML, "page.htm", "html"),
    (HTML, "page.txt", "html"),  # html/markdown/text are one family
    (HTML, "page.md", "html"),
    (HTML, "page", "html"),
    (HTML, "page.pdf", "named .pdf but the bytes are a web page (HTML)"),
    (HTML_BARE, "hours", "html"),
    (HTML_LATIN1, "cafe.html", "html"),  # HTML declares its own charset
    (MARKDOWN, "groceries.md", "markdown"),
    (MARKDOWN, "groceries.markdown", "markdown"),
    (MARKDOWN, "groceries.txt", "markdown"),
    (MARKDOWN, "groceries", "markdown"),
    (MARKDOWN, "groceries.epub", "named .epub but the bytes are Markdown text"),
    (WIKILINKS, "boiler", "markdown"),
    (FRONTMATTER, "gate", "markdown"),
    (TEXT, "wifi.txt", "text"),
    (TEXT, "wifi.md", "markdown"),  # the name decides when the text does not
    (TEXT, "wifi", "text"),
    (TEXT, "wifi.xyz", "text"),  # an unknown claim: the bytes decide
    (TEXT, "wifi.jpg", "named .jpg but the bytes are plain text"),
    (TEXT, "wifi.pdf", "named .pdf but the bytes are plain text"),
    (MENTIONS_PDF, "howto.txt", "text"),
    (ID3_NOTE, "tags", "text"),
    (LATIN1, "cafe.txt", "not UTF-8 text"),
    (LATIN1, "cafe", "not UTF-8 text"),
    (LATIN1, "cafe.md", "not UTF-8 text"),
    (LATIN1, "cafe.pdf", "named .pdf but the bytes are plain text"),
    (UTF16, "cafe.txt", "UTF-16 text; save it as UTF-8"),
    (UTF16, "cafe", "UTF-16 text; save it as UTF-8"),
    ("<html><body>Café</body></html>".encode("utf-16"), "cafe.html", "html"),
    (b"\x00\x01\x02\x03" * 64, "blob", "looks like binary data"),
    (b"\x00\x01\x02\x03" * 64, "blob.md", "named .md but the bytes are binary data"),
    (b"", "empty.txt", "empty file"),
    (b"", "empty", "empty file"),
    (b"  \n\t\n", "blank.md", "empty file"),
    (b"\xef\xbb\xbf\n", "bom-only.txt", "empty file"),
]


@pytest.mark.parametrize(
    ("data", "filename", "expected"), CASES, ids=[f"{i}-{c[1]}" for i, c in enumerate(CASES)]
)
def test_sniff(data: bytes, filename: str, expected: str):
    if expected in KINDS:
        assert sniff(data, filename) == expected
    else:
        with pytest.raises(UnsupportedFile) as refused:
            sniff(data, filename)
        assert str(refused.value) == expected


def test_pdf_header_may_sit_a_little_way_in():
    assert sniff(b"\x00" * 128 + PDF, "scan.pdf") == "pdf"


def test_damaged_epub_is_left_to_the_epub_parser():
    # Its directory is cut off, but its first entry still says "EPUB": the
    # parser can then say what is wrong instead of "a ZIP archive".
    assert sniff(EPUB[:200], "book.epub") == "epub"


def test_office_package_with_a_bomb_for_content_types_is_refused_without_reading_it():
    # [Content_Types].xml declaring entities: defusedxml refuses before expanding anything.
    bomb = make_zip(
        {
            "[Content_Types].xml": '<!DOCTYPE t [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;'
            '&a;&a;&a;&a;&a;&a;&a;">]><Types>&b;</Types>',
            "word/document.xml": "<w:document/>",
        }
    )
    with pytest.raises(
        UnsupportedFile,
        match=r"^looks like a damaged Office document: its list of parts is not readable",
    ):
        sniff(bomb, "letter")


def test_windows_path_in_the_name():
    assert sniff(PDF, "C:\\Users\\me\\receipt.PDF") == "pdf"
    with pytest.raises(UnsupportedFile, match=r"^named \.pdf but"):
        sniff(EXE, "C:\\Users\\me\\invoice.pdf")
