"""OCR and the parse lanes: a scanned upload is never read in the quick lane
(OCR takes seconds a page), but handed to the long lane with time for its
pages; and what the parse child sends back about images is checked before
the worker uses it. Parsing runs in real sandbox children with the real
tesseract; the worker's tasks run inline (Huey's immediate mode)."""

from __future__ import annotations

import pytest

from apps.core.models import JobRun
from apps.library import tasks
from apps.library.ingest import isolated
from apps.library.ingest.isolated import LONG, QUICK, ParseItem, ParseTooSlow, parse_one
from apps.library.ingest.parsing.types import ParseOptions
from apps.library.services.adding import upload_add
from tests.support.documents import letter_text, pdf_with_figure, photo_bytes, scanned_pdf

pytestmark = pytest.mark.django_db

CLAIM = "Your claim reference is HOLLYBROOK and the assessor visits on Thursday."


@pytest.fixture
def walls(monkeypatch) -> list[float]:
    """The wall-clock limit of every parse child started, in order (the real
    children still run)."""
    seen: list[float] = []
    real = isolated.run_in_child

    def recording(task, *, limits, **kwargs):
        seen.append(limits.wall_seconds)
        return real(task, limits=limits, **kwargs)

    monkeypatch.setattr(isolated, "run_in_child", recording)
    return seen


def index(owner, name: str, data: bytes, capture):
    added = upload_add(owner=owner, name=name, data=data)
    assert added.document is not None, added.error
    with capture(execute=True):
        tasks.ingest_queue(added.document)
    added.document.refresh_from_db()
    return added.document


def test_a_scanned_upload_is_read_in_the_long_lane_with_time_for_each_page(
    owner, settings, walls, django_capture_on_commit_callbacks
):
    settings.PARSE_QUICK_SECONDS, settings.PARSE_TIMEOUT_SECONDS = 10, 300
    settings.OCR_PAGE_SECONDS = 7
    pdf = scanned_pdf([letter_text(seed=1, sentences=6), letter_text(seed=2) + "\n\n" + CLAIM])

    letter = index(owner, "claim.pdf", pdf, django_capture_on_commit_callbacks)

    assert (letter.status, letter.error) == ("ready", "")
    assert letter.ocr == {"pages": [1, 2], "empty": []}
    assert "HOLLYBROOK" in " ".join(letter.chunks.values_list("text", flat=True))
    # The quick lane only counted the scanned pages; the long lane had the
    # parse limit plus 7 s for each of the two.
    assert walls == [10, 300 + 2 * 7]
    (run,) = JobRun.objects.filter(job="library_ingest")
    assert run.outcome == "ok" and run.summary.startswith("Indexed “")


def test_a_photo_goes_to_the_long_lane_when_its_text_is_to_be_read(
    owner, settings, walls, django_capture_on_commit_callbacks
):
    settings.PARSE_QUICK_SECONDS, settings.PARSE_TIMEOUT_SECONDS = 10, 300
    settings.OCR_PAGE_SECONDS = 7
    label = "Water softener\nSalt: Kingfisher tablets\nRefill every 6 weeks"

    photo = index(owner, "label.png", photo_bytes(label), django_capture_on_commit_callbacks)

    assert photo.status == "ready" and photo.kind == "image"
    assert "Kingfisher" in " ".join(photo.chunks.values_list("text", flat=True))
    assert walls == [10, 300 + 7]


def test_the_long_lane_counts_only_as_many_pages_as_ocr_will_read(owner, settings):
    settings.PARSE_TIMEOUT_SECONDS, settings.OCR_PAGE_SECONDS, settings.OCR_MAX_PAGES = 60, 5, 3
    pdf = scanned_pdf([f"Page {n} of the old tenancy agreement." for n in range(5)], dpi=100)
    item = ParseItem(data=pdf, kind="pdf", filename="tenancy.pdf")

    with pytest.raises(ParseTooSlow) as slow:
        parse_one(item, lane=QUICK)

    assert slow.value.ocr_pages == 3
    assert str(slow.value) == "5 scanned pages to read by OCR"  # of which OCR reads 3
    assert isolated.long_lane_seconds(slow.value.ocr_pages) == 60 + 3 * 5
    assert isolated.long_lane_seconds(None) == 60  # not counted (kb add): the plain limit


def test_a_scan_whose_ocr_outlasts_the_long_lane_fails_with_the_setting_to_raise(
    owner, settings, django_capture_on_commit_callbacks
):
    # No time for OCR at all: the parse limit alone, one second.
    settings.PARSE_TIMEOUT_SECONDS, settings.OCR_PAGE_SECONDS = 1, 0
    pdf = scanned_pdf([letter_text(seed=n, sentences=10) for n in range(3)])

    letter = index(owner, "scan.pdf", pdf, django_capture_on_commit_callbacks)

    assert (letter.status, letter.error) == (
        "failed",
        "parsing took longer than 1 s, the limit (JARVIS_PARSE_TIMEOUT_SECONDS)",
    )
    assert not letter.chunks.exists()


def test_figure_pixels_come_back_from_the_child_when_a_model_will_look_at_them():
    pdf = pdf_with_figure(body="Monthly gas use fell after the boiler service.", caption="Fig. 1")
    wanted = ParseItem(
        data=pdf, kind="pdf", filename="r.pdf", options=ParseOptions(figure_images=True)
    )
    unwanted = ParseItem(data=pdf, kind="pdf", filename="r.pdf")

    (figure,) = parse_one(wanted, lane=QUICK).figures
    (bare,) = parse_one(unwanted, lane=QUICK).figures

    assert figure.image.startswith(isolated.IMAGE_SIGNATURES[figure.media_type])
    assert bare.image == b"" and bare.image_hash == figure.image_hash


def test_image_bytes_a_child_sends_are_used_only_if_they_are_what_they_claim():
    def answer(media_type: str, images, inline: str = "") -> dict:
        figure = {
            "kind": "figure",
            "page": 1,
            "caption": "Fig. 1",
            "image_hash": "ab",
            "image": inline,
            "media_type": media_type,
        }
        parsed = {"title": "r", "kind": "pdf", "chunks": [], "figures": [figure, dict(figure)]}
        return {"parsed": parsed, "images": images}

    png = isolated.IMAGE_SIGNATURES["image/png"] + b"rest of a picture"
    script = b"<script>alert(1)</script>"
    checked = isolated._decoded(answer("image/png", [0, 1]), QUICK, [png, script])
    assert [f.image for f in checked.figures] == [png, b""]  # not a PNG: dropped
    # A type the worker never asked for, an index past the blobs, pixels
    # inlined in the JSON instead of a blob: all dropped.
    assert [
        f.image for f in isolated._decoded(answer("text/html", [0, 0]), LONG, [png]).figures
    ] == [
        b"",
        b"",
    ]
    assert [
        f.image for f in isolated._decoded(answer("image/png", [5, None]), LONG, [png]).figures
    ] == [
        b"",
        b"",
    ]
    inline = isolated._decoded(answer("image/png", None, inline="iVBORw0KGgo="), LONG, [])
    assert [f.image for f in inline.figures] == [b"", b""]
    # Told "needs OCR" in the long lane, where nothing should need handing on: a broken child.
    assert isinstance(
        isolated._decoded({"long": "x", "ocr_pages": 3}, LONG, []), isolated.ParserCrashed
    )
