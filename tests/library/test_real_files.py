"""Files nobody here wrote: what a person gets back from the PDFs and Office
files of other projects' test suites (vendored under bench/corpora/files/,
with their provenance), and from files generated to show the same causes.

Each test is a failure the file bench found on real files: a page MuPDF
cannot load, a free-text box with no /Contents, packages typed by a
`Default` content type, templates, Strict OOXML, fields, ODF headers, a
DOCTYPE in a macro part, library error text as a reason, truncated and
unsupported kinds with no advice.
"""

from __future__ import annotations

import io
import random
import re
import zipfile
from pathlib import Path

import pymupdf
import pytest
from PIL import ImageDraw

from apps.library.formats import kind_for_upload
from apps.library.ingest.filetypes import UnsupportedFile, sniff
from apps.library.ingest.parsing.ocr import recognise
from apps.library.ingest.parsing.types import ParsedDocument, UnreadableDocument
from apps.library.ingest.pipeline import parse_bytes
from apps.library.models import Document
from apps.library.services.adding import upload_add
from apps.library.services.documents import document_ingest
from tests.support.documents import docx_bytes, letter_text, pptx_bytes, scan_image

FILES = Path(__file__).resolve().parents[2] / "bench" / "corpora" / "files"


def real(name: str) -> bytes:
    return (FILES / name).read_bytes()


def read(data: bytes, name: str) -> ParsedDocument:
    """Typed by its bytes and parsed, as an upload is (in-process here)."""
    kind = sniff(data, name)
    return parse_bytes(data, kind=kind_for_upload(kind, name), filename=name)


def texts(parsed: ParsedDocument) -> str:
    return "\n".join(chunk.text for chunk in parsed.chunks)


def refusal(data: bytes, name: str) -> str:
    with pytest.raises((UnsupportedFile, UnreadableDocument)) as refused:
        read(data, name)
    return str(refused.value)


def rezip(data: bytes, change: dict[str, object]) -> bytes:
    """The package with some parts replaced (bytes) or edited (a function of the text)."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            part = source.read(info)
            if info.filename in change:
                edit = change[info.filename]
                part = edit(part.decode()).encode() if callable(edit) else edit
            target.writestr(info.filename, part)
        for name, part in change.items():
            if name not in source.namelist() and not callable(part):
                target.writestr(name, part)
    return out.getvalue()


# --- PDFs -------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_page_mupdf_cannot_load_is_skipped_and_named(owner, embedder):
    # pdf.js's Pages-tree-refs.pdf: page 2 sits in a page tree that loops, and
    # MuPDF raises FzErrorFormat (not a RuntimeError) when it is loaded.
    added = upload_add(
        owner=owner, name="Pages-tree-refs.pdf", data=real("pdf/Pages-tree-refs.pdf")
    )
    document = document_ingest(document=added.document, embedder=embedder)

    assert document.status == Document.Status.READY, document.error
    assert "page 2 could not be read (skipped)" in document.warnings
    assert any("Pages loop" in text for text in document.chunks.values_list("text", flat=True))


def test_a_broken_image_or_page_count_gives_a_plain_reason_not_mupdfs():
    # issue4575.pdf draws an image of width zero (FzErrorSyntax): its text stays.
    assert "Issue 4575" in texts(read(real("pdf/issue4575.pdf"), "issue4575.pdf"))
    # poppler-67295-0.pdf: MuPDF cannot even count its pages.
    reason = refusal(real("pdf/poppler-67295-0.pdf"), "poppler-67295-0.pdf")
    assert reason == "not a readable PDF: its list of pages is damaged"


def test_a_free_text_box_without_contents_keeps_the_words_it_draws():
    # bug1851498.pdf: a FreeText annotation whose appearance says "Hello World"
    # and whose /Contents is empty.
    parsed = read(real("pdf/bug1851498.pdf"), "bug1851498.pdf")

    assert [chunk.text for chunk in parsed.chunks] == ["[NOTE p.1] Hello World"]


def test_a_generated_free_text_box_without_contents_keeps_its_words():
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 100), "the body of the page", fontsize=11)
    annot = page.add_freetext_annot(pymupdf.Rect(300, 400, 550, 440), "call the roofer")
    doc.xref_set_key(annot.xref, "Contents", "()")  # the appearance stays

    parsed = read(doc.tobytes(), "remark.pdf")

    assert "[NOTE p.1] call the roofer" in [chunk.text for chunk in parsed.chunks]


def test_pages_that_draw_nothing_are_not_called_a_scan():
    assert refusal(real("pdf/empty.pdf"), "empty.pdf") == (
        "no text: the pages draw nothing (no text, images or drawings)"
    )


def test_a_repaired_file_without_text_says_what_is_true_of_it():
    doc = pymupdf.open()
    doc.new_page()
    data = doc.tobytes()

    reason = refusal(data[: data.rindex(b"xref")], "blank.pdf")  # MuPDF repairs it

    assert reason == (
        "no text: the pages draw nothing (no text, images or drawings) "
        "(the file was damaged and has been repaired)"
    )


def test_ocr_noise_is_not_kept_as_a_passage():
    # pdf.js's issue5475.pdf: a photo-like page where tesseract "reads" words
    # at confidences of 0-45 ("[prietrareen", "gegs"); nothing is worth keeping.
    reason = refusal(real("pdf/issue5475.pdf"), "issue5475.pdf")

    assert reason.startswith("scanned: no text was recognised on any page")


def test_a_signature_scribble_under_a_scanned_letter_adds_no_junk_passage():
    letter = letter_text(seed=3, sentences=8)
    image = scan_image(letter, seed=3).copy()
    pen, rng = ImageDraw.Draw(image), random.Random(0)
    width, height = image.size
    for x in range(int(width * 0.12), int(width * 0.8), 100):  # a scrawled signature
        points = [
            (x + rng.randrange(80), int(height * 0.78) + rng.randrange(180)) for _ in "123456"
        ]
        pen.line(points, fill=0, width=9)

    recognised = recognise(image, languages="eng", dpi=300)

    vocabulary = set(re.findall(r"\w+", letter.lower()))
    for paragraph in recognised.split("\n\n"):
        words = re.findall(r"\w+", paragraph.lower())
        known = sum(word in vocabulary for word in words)
        assert known >= 0.6 * len(words), paragraph  # the letter's own words, not scrawl
    assert "landlord" in recognised.lower()


# --- Office: how a package is typed --------------------------------------------------


@pytest.mark.parametrize(
    ("name", "kind", "words"),
    [
        # Written by .NET libraries: every .xml part typed as the main one by
        # <Default Extension="xml" ContentType="…document.main+xml"/>.
        ("office/document__55733.docx", "docx", "TEST"),
        ("office/spreadsheet__59021.xlsx", "xlsx", "Destination"),
        # Templates read as the documents they start.
        ("office/document__test.dotx", "docx", "Test"),
        ("office/spreadsheet__test.xltx", "xlsx", "test"),
        ("office/slideshow__testPPT.ppsx", "pptx", "Watershed"),
    ],
)
def test_office_packages_are_typed_by_their_content_types_including_defaults(name, kind, words):
    data = real(name)
    filename = name.split("/")[-1]

    assert sniff(data, filename) == kind
    assert words in texts(read(data, filename))


def test_a_powerpoint_template_reads_as_its_presentation():
    slides = pptx_bytes([("Budget", "Heating costs went up", "")])
    template = rezip(
        slides,
        {
            "[Content_Types].xml": lambda xml: xml.replace(
                "presentationml.presentation.main+xml", "presentationml.template.main+xml"
            )
        },
    )

    assert "Heating costs went up" in texts(read(template, "budget.potx"))


def test_a_strict_ooxml_workbook_reads_its_shared_strings():
    # Strict OOXML names every element in purl.oclc.org namespaces.
    parsed = read(real("office/spreadsheet__SampleSS.strict.xlsx"), "SampleSS.strict.xlsx")

    assert "Test spreadsheet" in texts(parsed)
    assert "Start of 2nd sheet" in texts(parsed)


# --- Office: where the words are ------------------------------------------------------


def test_text_inside_a_simple_field_is_read():
    parsed = read(real("office/document__FldSimple.docx"), "FldSimple.docx")

    assert texts(parsed) == "FldSimple.docx"  # the FILENAME field's shown result


def test_field_results_and_content_controls_are_read_but_not_field_codes():
    w = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
    body = (
        f'<w:p {w}><w:fldSimple w:instr=" MERGEFIELD Tenant "><w:r><w:t>Okafor</w:t></w:r>'
        "</w:fldSimple><w:r><w:t> rents flat 4.</w:t></w:r></w:p>"
        f'<w:p {w}><w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText> DATE '
        '</w:instrText></w:r><w:r><w:fldChar w:fldCharType="separate"/></w:r><w:r><w:t>'
        '3 March 2026</w:t></w:r><w:r><w:fldChar w:fldCharType="end"/></w:r></w:p>'
        f"<w:sdt {w}><w:sdtContent><w:p><w:r><w:t>Deposit held by the agent</w:t></w:r>"
        "</w:p></w:sdtContent></w:sdt>"
    )
    plain = docx_bytes(title="Lease", sections=[("Terms", ["placeholder"])])
    data = rezip(
        plain, {"word/document.xml": lambda xml: xml.replace("<w:body>", "<w:body>" + body, 1)}
    )

    text = texts(read(data, "lease.docx"))

    assert "Okafor rents flat 4." in text
    assert "3 March 2026" in text
    assert "Deposit held by the agent" in text
    assert "MERGEFIELD" not in text and "DATE" not in text


def test_table_cells_inside_content_controls_are_read():
    parsed = read(real("office/document__Bug54771b.docx"), "Bug54771b.docx")

    assert "Test Subtitle" in texts(parsed) and "Test User" in texts(parsed)


def test_an_odt_heading_and_its_page_header_and_footer_are_read():
    parsed = read(real("office/tests__examples__headerfooter.odt"), "headerfooter.odt")

    assert parsed.chunks[0].text == "Lorem ipsum"
    furniture = parsed.chunks[-1]
    assert furniture.section == "Header and footer"
    # The page-number field ("1") is left out of "Header <page> Test".
    assert furniture.text == "Header Test\n\nFooter Bottom"


# --- Office: DOCTYPE and entities ----------------------------------------------------------


def test_a_spreadsheet_whose_macro_parts_name_a_dtd_is_read():
    # LibreOffice writes <!DOCTYPE script:module … "module.dtd"> into every Basic part.
    parsed = read(real("office/samples__spreadsheet-with-macro.ods"), "macro.ods")

    assert "PM kilometers" in texts(parsed)


@pytest.mark.parametrize(
    "declaration",
    [
        '<!DOCTYPE script:module [<!ENTITY a "aaaaaaaaaa">]>',
        # The entity far into the internal subset, past where the head is read.
        "<!DOCTYPE script:module [<!-- " + "x" * 6000 + ' --><!ENTITY a "aaaaaaaaaa">]>',
    ],
)
def test_an_entity_declared_in_any_part_is_still_refused(declaration):
    macro = f'<?xml version="1.0"?>{declaration}<script:module xmlns:script="s">&a;</script:module>'
    data = rezip(
        real("office/samples__spreadsheet-with-macro.ods"), {"Basic/Standard/evil.xml": macro}
    )

    assert "declares XML entities" in refusal(data, "macro.ods")


def test_an_external_entity_in_a_real_odt_is_refused():
    reason = refusal(real("office/tests__examples__nasty.odt"), "nasty.odt")

    assert "declares XML entities" in reason


# --- Office: reasons ----------------------------------------------------------------------


def test_a_broken_part_or_archive_is_said_plainly_not_in_the_xml_parsers_words():
    odt = real("office/tests__examples__headerfooter.odt")
    broken = rezip(odt, {"content.xml": b"<office:document-content"})

    reason = refusal(broken, "letter.odt")

    assert reason == (
        "not a readable OpenDocument text: its content.xml is not well-formed XML (save it again)"
    )


def test_a_library_error_is_not_the_reason_shown():
    # openpyxl raises "<class '…_NamedCellStyle'>.name should be <class 'str'> …".
    reason = refusal(real("office/spreadsheet__style-alternate-content.xlsx"), "styles.xlsx")

    assert reason.startswith("not a readable spreadsheet: ")
    assert "<class" not in reason and "should be" not in reason and "openpyxl" not in reason


@pytest.mark.parametrize(
    ("data", "name"),
    [
        (
            real(
                "office/slideshow__clusterfuzz-testcase-minimized-POIXSLFFuzzer-5471515212382208.pptx"
            ),
            "talk.pptx",
        ),
        (pptx_bytes([("Budget", "Heating", "")])[:4000], "talk.pptx"),  # cut off mid-download
    ],
)
def test_a_truncated_presentation_says_it_is_damaged(data, name):
    reason = refusal(data, name)

    assert reason.startswith("a damaged or truncated PowerPoint presentation")
    assert "ZIP archive" not in reason


@pytest.mark.parametrize(
    ("name", "save_as"),
    [
        ("office/document__page-break.doc", "save it as .docx"),
        ("office/spreadsheet__SimpleWithColours.xls", "save it as .xlsx"),
        ("office/slideshow__Single_Coloured_Page.ppt", "save it as .pptx"),
        ("office/spreadsheet__Simple.xlsb", "save it as .xlsx"),
        ("office/tests__examples__cols.odp", "save it as .pptx or PDF"),
        ("office/openxml4j__62592.thmx", "save the document itself as .docx, .pptx or .xlsx"),
    ],
)
def test_every_unsupported_kind_names_what_to_save_it_as(name, save_as):
    assert save_as in refusal(real(name), name.split("/")[-1])


def ole_container(*streams: str) -> bytes:
    """An OLE2 header and one directory sector naming `streams` (what sniff reads)."""
    header = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * (512 - 8)
    entries = b"".join(
        (name.encode("utf-16-le") + b"\x00\x00").ljust(128, b"\x00")
        for name in ("Root Entry", *streams)
    )
    return header + entries.ljust(512, b"\x00")


@pytest.mark.parametrize(
    ("data", "name", "expected"),
    [
        # Stream names compare without case, as in the format (POI's 47950_upper.doc).
        (ole_container("WORDDOCUMENT"), "letter.doc", "a Word 97-2003 document (save it as .docx)"),
        (ole_container("BOOK"), "budget.xls", "an Excel 5 workbook (save it as .xlsx)"),
        # A name in the text, not at a directory entry, says nothing.
        (
            ole_container("Summary") + b"\x00\x00" + "Workbook".encode("utf-16-le") + b"\x00\x00",
            "x.ppt",
            "an older Office document (save it as .pptx)",
        ),
        (
            ole_container("Summary"),
            "file",
            "an older Office document (save it as .docx, .xlsx or .pptx)",
        ),
    ],
)
def test_older_office_files_are_named_by_their_streams(data, name, expected):
    assert refusal(data, name) == f"looks like {expected}"
