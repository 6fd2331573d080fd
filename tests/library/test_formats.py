"""What a household keeps beyond notes and born-digital PDFs: scanned letters,
photos of labels, Word, PowerPoint, Excel and OpenDocument files, RTF and CSV.

Every file is generated here from text (tests/support/documents.py), so each
test names the words that only its image, table, slide or sheet holds and
then finds the document by them. OCR runs the real tesseract.
"""

from __future__ import annotations

import io
import zipfile

import pillow_heif
import pymupdf
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from PIL import Image

from apps.instance.selectors import instance_settings
from apps.library.ingest.parsing import sheets
from apps.library.ingest.parsing.types import UnreadableDocument
from apps.library.ingest.pipeline import parse_bytes
from apps.library.ingest.vision import parse_options_for, vision_plan
from apps.library.models import Document
from apps.library.search import search
from apps.library.services.adding import upload_add, uploads_source
from apps.library.services.documents import document_ingest
from tests.instance.test_prompts import URL, settings_form

# `now` is a fixture: imported so pytest finds it by name.
from tests.library.test_adding import now as now
from tests.library.test_adding import signed_in
from tests.support.documents import (
    docx_bytes,
    letter_text,
    photo_bytes,
    photo_image,
    pptx_bytes,
    scan_image,
    scanned_pdf,
    xlsx_bytes,
    zip_bomb_docx,
)

pytestmark = pytest.mark.django_db


def add(owner, name: str, data: bytes, embedder) -> Document:
    """Upload and index one file, as the worker does after an upload."""
    added = upload_add(owner=owner, name=name, data=data)
    assert added.document is not None, added.error
    return document_ingest(document=added.document, embedder=embedder)


def found(owner, query: str, embedder, document: Document) -> list:
    """The passages of `document` that a search for `query` returns."""
    return [
        r
        for r in search(user=owner, query=query, embedder=embedder).results
        if r.document_id == document.pk
    ]


# --- scanned letters and photos (OCR) ----------------------------------------------


CLAIM = "Your claim reference is HOLLYBROOK and the assessor visits on Thursday."


def test_a_scanned_letter_is_read_by_ocr_and_found_by_a_word_only_its_image_holds(
    owner, member, now, embedder
):
    pdf = scanned_pdf([letter_text(seed=4, sentences=12) + "\n\n" + CLAIM])
    client = signed_in(owner)

    client.post("/library/add/upload/", {"files": [SimpleUploadedFile("council-letter.pdf", pdf)]})

    document = Document.objects.get(path="council-letter.pdf")
    assert (document.status, document.error) == ("ready", "")
    assert document.ocr == {"pages": [1], "empty": []}
    assert set(document.chunks.values_list("origin", flat=True)) == {"ocr"}
    [hit, *_] = found(owner, "hollybrook claim reference", embedder, document)
    assert "HOLLYBROOK" in hit.text and hit.page == 1
    # The page shows the scan beside the recognised text, marked as OCR.
    page = client.get(f"/library/doc/{document.pk}/").content.decode()
    assert "recognised text (OCR)" in page
    assert f"/library/doc/{document.pk}/page/1.png" in page
    image = client.get(f"/library/doc/{document.pk}/page/1.png")
    assert image["Content-Type"] == "image/png"
    assert Image.open(io.BytesIO(image.content)).height > 500
    # Another person's scan is not theirs to see, page images included.
    assert signed_in(member).get(f"/library/doc/{document.pk}/page/1.png").status_code == 404


def test_a_sideways_phone_photo_is_turned_upright_by_its_exif_tag_before_ocr(owner, embedder):
    label = "BOILER LABEL\nModel Vaillant ecoTEC plus 832\nSerial 21184400\nGas council 47-044-63"
    data = photo_bytes(label, orientation=6)
    stored = Image.open(io.BytesIO(data))
    assert stored.width > stored.height  # a portrait page stored sideways: only the tag says so

    document = add(owner, "IMG_2041.png", data, embedder)

    assert document.status == "ready" and document.kind == "image"
    text = " ".join(document.chunks.values_list("text", flat=True))
    assert "21184400" in text and "ecoTEC" in text
    assert found(owner, "ecotec boiler serial", embedder, document)
    shown = Image.open(
        io.BytesIO(signed_in(owner).get(f"/library/doc/{document.pk}/page/1.png").content)
    )
    assert shown.width < shown.height  # shown upright too


@pytest.mark.parametrize(
    ("name", "format"), [("IMG_3310.HEIC", "HEIF"), ("label.webp", "WEBP"), ("label.jpg", "JPEG")]
)
def test_photos_in_the_formats_phones_write_are_read(owner, embedder, name, format):
    pillow_heif.register_heif_opener()  # the HEIC writer a phone has, for this test's photo
    label = "Water softener\nSalt: Kingfisher tablets\nRefill every 6 weeks"
    buffer = io.BytesIO()
    photo_image(label, seed=3).save(buffer, format=format, quality=90)

    document = add(owner, name, buffer.getvalue(), embedder)

    assert (document.status, document.kind) == ("ready", "image")
    assert found(owner, "Kingfisher salt tablets", embedder, document)


def test_a_german_letter_is_read_in_the_collections_ocr_language(owner, embedder):
    source = uploads_source(owner)
    source.ocr_languages = "deu"
    source.save(update_fields=["ocr_languages"])
    text = letter_text(seed=7, sentences=8, german=True) + (
        "\n\nDie Müllabfuhr in Ihrer Straße findet künftig am Donnerstag statt."
    )
    buffer = io.BytesIO()
    scan_image(text, seed=7).save(buffer, format="PNG")

    document = add(owner, "brief.png", buffer.getvalue(), embedder)

    recognised = " ".join(document.chunks.values_list("text", flat=True))
    assert "Müllabfuhr" in recognised and "Straße" in recognised


def test_a_page_that_yields_no_text_says_so(owner, embedder):
    blank = Image.new("L", (1240, 1754), 235)  # an empty sheet fed through the scanner
    buffer = io.BytesIO()
    blank.save(buffer, format="JPEG")
    pdf = pymupdf.open(stream=scanned_pdf([CLAIM]))
    page = pdf.new_page()
    page.insert_image(page.rect, stream=buffer.getvalue())

    document = add(owner, "two-pages.pdf", pdf.tobytes(), embedder)

    assert document.status == "ready"
    assert document.ocr == {"pages": [1, 2], "empty": [2]}
    assert "no text was recognised on page(s) 2" in document.warnings


# --- Office files -------------------------------------------------------------------


def test_a_word_document_keeps_its_headings_and_its_table_is_searchable(owner, embedder):
    data = docx_bytes(
        title="Kitchen renovation",
        sections=[
            ("Quotes", ["Three builders quoted for the kitchen."]),
            ("Decision", ["We chose the second quote."]),
        ],
        table=[["Builder", "Price", "Start"], ["Marlowe & Daughters", "14,200", "April"]],
    )

    document = add(owner, "kitchen.docx", data, embedder)

    assert (document.kind, document.title) == ("docx", "Kitchen renovation")
    [table] = [c for c in document.chunks.all() if c.text.startswith("| Builder")]
    assert table.section == "Quotes"
    assert "| Marlowe & Daughters | 14,200 | April |" in table.text
    assert found(owner, "Marlowe Daughters builder price", embedder, document)


def test_a_presentation_is_a_section_per_slide_with_its_speaker_notes(owner, embedder):
    data = pptx_bytes(
        [
            ("Holiday plans", "Two weeks in August", ""),
            ("Budget", "Flights and a cottage", "Ask granny Rosalind about the dog sitting"),
        ]
    )

    document = add(owner, "holiday.pptx", data, embedder)

    sections = list(document.chunks.values_list("section", flat=True))
    assert sections == ["Slide 1 · Holiday plans", "Slide 2 · Budget"]
    [hit, *_] = found(owner, "Rosalind dog sitting", embedder, document)
    assert "Speaker notes: Ask granny Rosalind" in hit.text


def test_a_workbook_is_a_section_per_sheet_with_rows_as_tables(owner, embedder):
    data = xlsx_bytes(
        {
            "Budget": [["Item", "Monthly"], ["Rent", 950], ["Gas", 81.5]],
            "Savings": [["Goal", "Target", "Saved"], ["New bicycle for Ottilie", 640, 410]],
        }
    )

    document = add(owner, "money.xlsx", data, embedder)

    chunks = {c.section: c.text for c in document.chunks.all()}
    assert chunks["Sheet · Budget"].splitlines()[:3] == [
        "| Item | Monthly |",
        "| --- | --- |",
        "| Rent | 950 |",
    ]
    assert "| New bicycle for Ottilie | 640 | 410 |" in chunks["Sheet · Savings"]
    [hit, *_] = found(owner, "bicycle Ottilie savings", embedder, document)
    assert hit.section == "Sheet · Savings"


def test_the_library_lists_office_files_and_photos_by_kind(owner, embedder):
    add(owner, "notes.docx", docx_bytes(title="Shed", sections=[("Roof", ["Felt"])]), embedder)
    add(owner, "money.xlsx", xlsx_bytes({"Budget": [["Item", "Cost"], ["Felt", 30]]}), embedder)
    client = signed_in(owner)

    office = client.get("/library/?kind=office").content.decode()
    assert "notes.docx" in office and "money.xlsx" in office
    assert "notes.docx" not in client.get("/library/?kind=images").content.decode()


def test_a_long_sheet_is_cut_and_says_so(owner, monkeypatch):
    monkeypatch.setattr(sheets, "MAX_ROWS", 5)
    rows = [["Date", "Reading"]] + [[f"2026-01-{d:02d}", d * 3] for d in range(1, 20)]

    parsed = parse_bytes(xlsx_bytes({"Meter": rows}), kind="xlsx", filename="meter.xlsx")

    assert "sheet 'Meter': only the first 5 rows were indexed (it has more)" in parsed.warnings
    text = "\n".join(c.text for c in parsed.chunks)
    assert "2026-01-04" in text and "2026-01-05" not in text
    assert "continues beyond row 5; not indexed" in text


def test_opendocument_text_and_spreadsheet(owner):
    content = (
        '<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
        'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
        'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"><office:body>'
        '<office:text><text:h text:outline-level="1">Allotment</text:h>'
        '<text:p>Plot 14 has<text:s text:c="2"/>new raspberry canes.</text:p>'
        "<text:list><text:list-item><text:p>water butt</text:p></text:list-item></text:list>"
        "</office:text></office:body></office:document-content>"
    )
    odt = _zip({"mimetype": "application/vnd.oasis.opendocument.text", "content.xml": content})
    parsed = parse_bytes(odt, kind="odt", filename="allotment.odt")
    assert [(c.section, c.text) for c in parsed.chunks] == [
        ("Allotment", "Plot 14 has  new raspberry canes.\n\n- water butt")
    ]

    # A million "repeated" columns and rows cost nothing: repeats are bounded first.
    sheet = (
        '<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
        'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
        'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"><office:body>'
        '<office:spreadsheet><table:table table:name="Seeds">'
        "<table:table-row><table:table-cell><text:p>Seed</text:p></table:table-cell>"
        "<table:table-cell><text:p>Sown</text:p></table:table-cell></table:table-row>"
        "<table:table-row><table:table-cell><text:p>Kohlrabi</text:p></table:table-cell>"
        "<table:table-cell><text:p>March</text:p></table:table-cell>"
        '<table:table-cell table:number-columns-repeated="1000000"/></table:table-row>'
        '<table:table-row table:number-rows-repeated="1048576"><table:table-cell/></table:table-row>'
        "</table:table></office:spreadsheet></office:body></office:document-content>"
    )
    ods = _zip({"mimetype": "application/vnd.oasis.opendocument.spreadsheet", "content.xml": sheet})
    parsed = parse_bytes(ods, kind="ods", filename="seeds.ods")
    assert [(c.section, c.text) for c in parsed.chunks] == [
        ("Sheet · Seeds", "| Seed | Sown |\n| --- | --- |\n| Kohlrabi | March |")
    ]


def test_rtf_and_csv():
    rtf = rb"{\rtf1\ansi\ansicpg1252{\info{\title Gate code}}The gate code is 4471\par Gr\'fc\'dfe}"
    parsed = parse_bytes(rtf, kind="rtf", filename="gate.rtf")
    assert parsed.title == "Gate code"
    assert parsed.chunks[0].text == "The gate code is 4471\nGrüße"

    csv = b"Datum;Betrag;Zweck\n01.03.2026;-81,50;Gas\n02.03.2026;-950,00;Miete\n"
    parsed = parse_bytes(csv, kind="csv", filename="konto.csv")
    assert parsed.chunks[0].text.splitlines()[2] == "| 01.03.2026 | -81,50 | Gas |"


# --- hostile files ----------------------------------------------------------------------


def test_a_zip_bomb_docx_fails_with_its_reason(owner, embedder):
    data = zip_bomb_docx()
    assert len(data) < 1024 * 1024  # a few hundred kilobytes that declare 64 MB

    document = add(owner, "invoice.docx", data, embedder)

    # The instance's cap on what any ZIP-based file may unpack to comes first.
    assert (document.status, document.error) == (
        "failed",
        "the Word document unpacks to 64 MB, over the 50 MB limit (JARVIS_MAX_UNPACKED_MB)",
    )
    assert not document.chunks.exists()


def test_a_zip_bomb_docx_under_raised_instance_caps_is_still_refused_by_its_parser(
    owner, embedder, settings
):
    settings.MAX_UNPACKED_MB, settings.MAX_ZIP_RATIO = 500, 1_000_000

    document = add(owner, "invoice.docx", zip_bomb_docx(), embedder)

    assert document.status == "failed"
    assert document.error.startswith("refused: part 'word/document.xml' of the Word document")
    assert "(a zip bomb?)" in document.error
    assert not document.chunks.exists()


def test_xml_entity_expansion_in_a_docx_is_refused():
    good = docx_bytes(title="Note", sections=[("A", ["harmless"])])
    laughs = '<!DOCTYPE d [<!ENTITY a "lol"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]>'
    data = _rewrite(good, "word/document.xml", lambda xml: xml.replace("?>", "?>" + laughs, 1))

    with pytest.raises(UnreadableDocument, match="declares XML entities"):
        parse_bytes(data, kind="docx", filename="note.docx")


def test_an_image_declaring_too_many_pixels_is_refused_before_decoding(owner, embedder):
    huge = Image.new("1", (12_000, 9_000))  # 108 megapixels, a few kilobytes as PNG
    buffer = io.BytesIO()
    huge.save(buffer, format="PNG")

    document = add(owner, "panorama.png", buffer.getvalue(), embedder)

    assert document.status == "failed"
    assert document.error == ("refused: the image is larger than 64 megapixels (12,000 x 9,000)")


def test_a_truncated_photo_fails_with_its_reason():
    buffer = io.BytesIO()
    photo_image("Gas meter 0042", seed=1).save(buffer, format="JPEG")

    with pytest.raises(
        UnreadableDocument, match=r"^not a readable image \(image file is truncated"
    ):
        parse_bytes(buffer.getvalue()[:20_000], kind="image", filename="meter.jpg")


def _zip(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def _rewrite(data: bytes, part: str, change) -> bytes:
    source = zipfile.ZipFile(io.BytesIO(data))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for info in source.infolist():
            content = source.read(info)
            if info.filename == part:
                content = change(content.decode()).encode()
            archive.writestr(info, content)
    return buffer.getvalue()


def test_the_owner_sets_ocr_languages_and_descriptions_on_the_collections_page(owner, member):
    source = uploads_source(owner)
    form = {f"c{source.pk}-sharing": "owner", f"c{source.pk}-cloud": "allowed"}
    client = signed_in(owner)

    page = client.get("/library/collections/").content.decode()
    assert "Languages of scanned text" in page and "Figures and photos" in page
    client.post(
        f"/library/collections/{source.pk}/",
        {**form, f"c{source.pk}-ocr_languages": "eng+deu", f"c{source.pk}-describe_images": "on"},
    )
    source.refresh_from_db()
    assert (source.ocr_languages, source.describe_images) == ("eng+deu", "on")

    refused = client.post(
        f"/library/collections/{source.pk}/",
        {**form, f"c{source.pk}-ocr_languages": "eng+fra"},
        follow=True,
    )
    assert "OCR language data not installed on the server: fra" in refused.content.decode()
    source.refresh_from_db()
    assert source.ocr_languages == "eng+deu"
    assert (
        signed_in(member)
        .post(f"/library/collections/{source.pk}/", {**form, f"c{source.pk}-ocr_languages": ""})
        .status_code
        == 404
    )


def test_the_instance_sets_the_default_ocr_languages_in_admin(client, admin, owner):
    client.force_login(admin)
    instance_settings()
    assert "OCR languages" in client.get(URL).content.decode()
    bad = client.post(URL, settings_form(ocr_languages="english; rm -rf"))
    assert bad.status_code == 200 and "Tesseract language codes joined by +" in bad.content.decode()
    client.post(URL, settings_form(ocr_languages="deu+eng"))
    assert instance_settings().ocr_languages == "deu+eng"

    source = uploads_source(owner)  # sets none of its own: the instance's apply
    options = parse_options_for(source, vision_plan(source, in_private_dir=False))
    assert options.ocr_languages == "deu+eng"
    source.ocr_languages = "eng"
    assert (
        parse_options_for(source, vision_plan(source, in_private_dir=False)).ocr_languages == "eng"
    )
