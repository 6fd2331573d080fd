"""PDF extraction: what a person gets back from a PDF they upload.

Every PDF is generated here with PyMuPDF, so each test shows the exact page
layout and annotation it is about.
"""

from __future__ import annotations

import random
import re

import pymupdf
import pytest

from apps.library.ingest.parsing.pdf import extract_pdf, split_text
from apps.library.ingest.parsing.types import (
    ChunkDraft,
    ParsedDocument,
    ParseOptions,
    UnreadableDocument,
)

LINES = [
    "alpha beta gamma delta",
    "epsilon zeta eta theta",
    "iota kappa lambda mu",
]


def new_page(doc: pymupdf.Document, lines: list[str] = LINES, *, y: float = 100) -> pymupdf.Page:
    page = doc.new_page()
    page.insert_text((72, y), "\n".join(lines), fontsize=11)
    return page


def quads_for(page: pymupdf.Page, *phrases: str) -> list[pymupdf.Quad]:
    quads: list[pymupdf.Quad] = []
    for phrase in phrases:
        found = page.search_for(phrase, quads=True)
        assert found, phrase
        quads.extend(found)
    return quads


def extract(doc: pymupdf.Document, filename: str = "paper.pdf") -> ParsedDocument:
    return extract_pdf(doc.tobytes(), filename=filename)


def annotation_chunks(parsed: ParsedDocument) -> list[ChunkDraft]:
    return [chunk for chunk in parsed.chunks if chunk.annotation]


def body_chunks(parsed: ParsedDocument) -> list[ChunkDraft]:
    return [chunk for chunk in parsed.chunks if not chunk.annotation]


def image_only_page(doc: pymupdf.Document) -> pymupdf.Page:
    """A page like a scan: an image and no text layer."""
    page = doc.new_page()
    pixmap = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 32, 32), 0)
    pixmap.clear_with(180)
    page.insert_image(pymupdf.Rect(50, 50, 550, 750), pixmap=pixmap)
    return page


# --- highlights and other text markup ---------------------------------------


def test_multi_line_highlight_returns_exactly_the_covered_words_in_reading_order() -> None:
    doc = pymupdf.open()
    page = new_page(doc)
    # Quads handed over bottom line first: the result must still read top-down.
    page.add_highlight_annot(quads_for(page, "epsilon zeta", "gamma delta"))

    parsed = extract(doc)

    [chunk] = annotation_chunks(parsed)
    assert chunk.text == "[HIGHLIGHT p.1] gamma delta epsilon zeta"
    assert chunk.annotation == "highlight"
    assert chunk.page == 1
    for neighbour in ("alpha", "beta", "eta", "theta", "iota"):
        assert neighbour not in chunk.text.split()


def test_comment_typed_on_a_highlight_is_attached() -> None:
    doc = pymupdf.open()
    page = new_page(doc)
    annot = page.add_highlight_annot(quads_for(page, "kappa lambda"))
    annot.set_info(content="check   this\nagainst the survey")
    annot.update()

    [chunk] = annotation_chunks(extract(doc))

    assert chunk.text == "[HIGHLIGHT p.1] kappa lambda — note: check this against the survey"


@pytest.mark.parametrize(
    ("add", "kind"),
    [
        (pymupdf.Page.add_underline_annot, "underline"),
        (pymupdf.Page.add_squiggly_annot, "squiggly"),
        (pymupdf.Page.add_strikeout_annot, "strikeout"),
    ],
)
def test_other_text_markup_kinds_are_labelled(add, kind: str) -> None:
    doc = pymupdf.open()
    page = new_page(doc)
    add(page, quads_for(page, "zeta eta"))

    [chunk] = annotation_chunks(extract(doc))

    assert chunk.text == f"[{kind.upper()} p.1] zeta eta"
    assert chunk.annotation == kind


def test_markup_over_blank_space_is_kept_only_when_it_has_a_comment() -> None:
    doc = pymupdf.open()
    page = new_page(doc)
    page.add_highlight_annot(pymupdf.Rect(300, 500, 400, 520))
    commented = page.add_highlight_annot(pymupdf.Rect(300, 600, 400, 620))
    commented.set_info(content="figure missing here")
    commented.update()

    chunks = annotation_chunks(extract(doc))

    assert [chunk.text for chunk in chunks] == ["[HIGHLIGHT p.1] — note: figure missing here"]


def test_sticky_note_and_free_text_box_become_notes() -> None:
    doc = pymupdf.open()
    page = new_page(doc)
    page.add_text_annot((400, 100), "Ask Bob about this")
    page.add_text_annot((400, 300), "   ")  # empty: nothing to index
    page.add_freetext_annot(pymupdf.Rect(300, 400, 550, 440), "typed remark")

    parsed = extract(doc)

    notes = annotation_chunks(parsed)
    assert [chunk.text for chunk in notes] == [
        "[NOTE p.1] Ask Bob about this",
        "[NOTE p.1] typed remark",
    ]
    assert {chunk.annotation for chunk in notes} == {"note"}
    # The free-text box is drawn on the page, but it is a note, not body text.
    assert all("typed remark" not in chunk.text for chunk in body_chunks(parsed))


def test_page_numbers_are_right_and_annotations_come_first() -> None:
    doc = pymupdf.open()
    for number in (1, 2, 3):
        new_page(doc, [f"page{number} opening words", f"page{number} closing words"])
    doc[2].add_highlight_annot(quads_for(doc[2], "closing"))
    doc[0].add_text_annot((400, 100), "first page note")

    parsed = extract(doc)

    assert [(c.text, c.page) for c in annotation_chunks(parsed)] == [
        ("[NOTE p.1] first page note", 1),
        ("[HIGHLIGHT p.3] closing", 3),
    ]
    assert [chunk.annotation for chunk in parsed.chunks[:2]] == ["note", "highlight"]
    body = body_chunks(parsed)
    assert [(c.page, c.section) for c in body] == [(1, "Page 1"), (2, "Page 2"), (3, "Page 3")]
    assert all(chunk.text.startswith(f"page{chunk.page} ") for chunk in body)


# --- scanned PDFs --------------------------------------------------------------


def test_scanned_page_with_a_sticky_note_is_indexed_with_a_warning() -> None:
    doc = pymupdf.open()
    page = image_only_page(doc)
    page.add_text_annot((100, 100), "receipt for the new boiler")
    page.add_freetext_annot(pymupdf.Rect(100, 600, 400, 640), "paid in cash")

    parsed = extract(doc)

    assert [chunk.text for chunk in parsed.chunks] == [
        "[NOTE p.1] receipt for the new boiler",
        "[NOTE p.1] paid in cash",
    ]
    assert (
        "scanned: no text was recognised on any page (OCR languages: eng): only annotations "
        "were indexed" in parsed.warnings
    )
    assert parsed.ocr_pages == [1] and parsed.ocr_empty_pages == [1]


def test_scanned_pdf_without_text_or_annotations_is_unreadable() -> None:
    doc = pymupdf.open()
    image_only_page(doc)  # a flat grey image: OCR finds nothing
    image_only_page(doc)

    with pytest.raises(
        UnreadableDocument, match=re.escape("no text was recognised on any page (OCR languages")
    ):
        extract(doc)


def test_scanned_pdf_with_ocr_turned_off_says_so() -> None:
    doc = pymupdf.open()
    image_only_page(doc)

    with pytest.raises(UnreadableDocument) as refused:
        extract_pdf(doc.tobytes(), filename="scan.pdf", options=ParseOptions(ocr_languages=""))
    assert str(refused.value) == (
        "scanned: no text layer, and OCR is turned off for this collection"
    )


# --- files that cannot be read -----------------------------------------------


def test_encrypted_pdf_needs_a_password() -> None:
    doc = pymupdf.open()
    new_page(doc)
    data = doc.tobytes(encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="u", owner_pw="o")

    with pytest.raises(UnreadableDocument, match=re.escape("encrypted PDF (password required)")):
        extract_pdf(data, filename="secret.pdf")


def test_pdf_with_only_an_owner_password_is_read() -> None:
    # Opening needs no password; only editing or printing is restricted.
    doc = pymupdf.open()
    new_page(doc)
    data = doc.tobytes(encryption=pymupdf.PDF_ENCRYPT_AES_256, owner_pw="o")

    parsed = extract_pdf(data, filename="locked.pdf")

    assert "gamma" in parsed.chunks[0].text


def test_zero_byte_file_is_empty() -> None:
    with pytest.raises(UnreadableDocument, match=r"^empty file$"):
        extract_pdf(b"", filename="empty.pdf")


def test_random_bytes_are_not_a_pdf() -> None:
    data = random.Random(7).randbytes(4096)

    with pytest.raises(UnreadableDocument, match=r"^not a readable PDF: no PDF header") as caught:
        extract_pdf(data, filename="noise.pdf")
    assert isinstance(caught.value.__cause__, pymupdf.FileDataError)


def test_pdf_cut_short_is_not_readable() -> None:
    doc = pymupdf.open()
    new_page(doc)
    data = doc.tobytes()

    with pytest.raises(UnreadableDocument) as caught:
        extract_pdf(data[:300], filename="cut.pdf")
    # It is a PDF, just a broken one; and MuPDF's "code=2: …" is not the reason.
    assert str(caught.value) == (
        "not a readable PDF: the file is damaged beyond repair (save or download it again)"
    )


def test_pdf_missing_its_cross_reference_table_is_repaired_and_read_with_a_warning() -> None:
    doc = pymupdf.open()
    new_page(doc)
    data = doc.tobytes()

    parsed = extract_pdf(data[: data.rindex(b"xref")], filename="cut.pdf")

    assert parsed.chunks[0].text.startswith("alpha beta gamma delta")
    assert any("repaired" in warning for warning in parsed.warnings)


# --- body text -------------------------------------------------------------------


def test_long_page_is_split_into_chunks_that_keep_every_word() -> None:
    words = [f"w{index:04d}" for index in range(900)]  # ~5,400 characters
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_textbox(pymupdf.Rect(40, 40, 560, 800), " ".join(words), fontsize=7)

    chunks = extract(doc).chunks

    assert len(chunks) >= 5
    assert all(len(chunk.text) <= 1000 for chunk in chunks)
    assert all(chunk.page == 1 and chunk.section == "Page 1" for chunk in chunks)
    # Never cut inside a word, nothing lost, nothing reordered.
    assert " ".join(chunk.text for chunk in chunks).split() == words


def test_unbroken_token_longer_than_a_chunk_is_cut_without_losing_characters() -> None:
    token = "https://example.org/" + "x" * 2500

    pieces = split_text(f"see {token} end")

    assert all(len(piece) <= 1000 for piece in pieces)
    assert "".join(pieces).replace(" ", "") == f"see{token}end"


def test_two_column_page_reads_each_column_whole() -> None:
    doc = pymupdf.open()
    page = doc.new_page()
    left = "Left one opens the paper.\n\nLeft two follows on.\n\nLeft three closes."
    right = "Right one starts column two.\n\nRight two follows.\n\nRight three ends."
    page.insert_textbox(pymupdf.Rect(40, 40, 290, 400), left, fontsize=10)
    page.insert_textbox(pymupdf.Rect(310, 40, 560, 400), right, fontsize=10)

    [chunk] = extract(doc).chunks

    assert chunk.text.split("\n\n") == [*left.split("\n\n"), *right.split("\n\n")]


def test_line_end_hyphenation_is_undone() -> None:
    doc = pymupdf.open()
    new_page(doc, ["Dense retrie-", "val works with Self-", "Attention layers."])

    [chunk] = extract(doc).chunks

    assert chunk.text == "Dense retrieval works with Self-Attention layers."


# --- metadata ------------------------------------------------------------------


def titled_doc(metadata_title: str = "") -> pymupdf.Document:
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 90), "Sparse Retrieval at Scale:", fontsize=20)
    page.insert_text((72, 115), "A Field Report", fontsize=20)
    page.insert_text((72, 150), "Jane Doe, University of Nowhere", fontsize=12)
    page.insert_text((72, 200), "Abstract. We index many things.", fontsize=10)
    page.insert_text((72, 215), "The body text is small and plentiful here.", fontsize=10)
    doc.set_metadata({"title": metadata_title})
    return doc


def test_title_comes_from_meaningful_metadata() -> None:
    parsed = extract(titled_doc("Sparse Retrieval at Scale"), filename="x.pdf")

    assert parsed.title == "Sparse Retrieval at Scale"
    assert parsed.kind == "pdf"


@pytest.mark.parametrize(
    "junk", ["", "untitled", "Microsoft Word - draft3.docx", "paper_final.pdf", "20240117"]
)
def test_title_falls_back_to_largest_font_lines_on_page_one(junk: str) -> None:
    parsed = extract(titled_doc(junk), filename="x.pdf")

    assert parsed.title == "Sparse Retrieval at Scale: A Field Report"


def test_title_falls_back_to_the_humanised_filename() -> None:
    doc = pymupdf.open()
    new_page(doc)  # one font size: no line stands out as a title

    assert extract(doc, filename="my_paper-v2.pdf").title == "my paper v2"


def test_authors_come_from_metadata_with_normalised_separators() -> None:
    doc = pymupdf.open()
    new_page(doc)
    doc.set_metadata({"author": "Ada Lovelace; Alan Turing and Grace Hopper"})

    assert extract(doc).authors == "Ada Lovelace, Alan Turing, Grace Hopper"


def test_no_author_metadata_means_no_authors() -> None:
    doc = pymupdf.open()
    new_page(doc)

    assert extract(doc).authors == ""


def test_doi_is_found_on_page_one_without_trailing_punctuation() -> None:
    doc = pymupdf.open()
    new_page(doc, ["Published as https://doi.org/10.1145/3290605.3300857.", "More text."])

    assert extract(doc).doi == "10.1145/3290605.3300857"


def test_doi_in_metadata_wins_and_later_pages_are_not_searched() -> None:
    with_metadata = pymupdf.open()
    new_page(with_metadata, ["Cites (see 10.9999/other.2)."])
    with_metadata.set_metadata({"subject": "doi:10.1000/xyz-123"})
    late = pymupdf.open()
    for _ in range(2):
        new_page(late)
    new_page(late, ["Reference: 10.1000/cited.elsewhere"])

    assert extract(with_metadata).doi == "10.1000/xyz-123"
    assert extract(late).doi == ""
