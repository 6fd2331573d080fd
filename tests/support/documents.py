"""Household files made from text, for tests and benchmarks: scanned letters
(image-only PDF pages), photos of paper with EXIF orientation, Office files
and a PDF with a figure. Nothing here is a stored binary: every file is
generated from the text given, so a test can say which words only its image,
table or slide holds.

    page_png = scan_image(letter_text(seed=3))            # a 300 dpi grey scan
    pdf = scanned_pdf([letter_text(seed=n) for n in range(20)])
    photo = photo_png("Boiler model XR-200 …", orientation=6)
"""

from __future__ import annotations

import io
import random
import zipfile

import docx
import openpyxl
import pptx
import pymupdf
from PIL import Image, ImageDraw, ImageFilter

A4 = pymupdf.paper_rect("a4")
SCAN_DPI = 300

# Sentences a household's post holds. `{}` slots are filled from the lists
# below, so every generated letter is different but reads like a letter.
_SENTENCES_EN = [
    "Thank you for your letter of {date} regarding your account {number}.",
    "We are writing to confirm that your annual boiler service is booked for {date}.",
    "Please find enclosed the statement for the period ending {date}.",
    "The outstanding balance of {amount} pounds is due within thirty days.",
    "Our engineer will arrive between eight in the morning and noon.",
    "If this appointment is not convenient, please call our customer service team.",
    "Your council tax band has been reviewed and remains band {band}.",
    "The water meter at your property was read on {date} and shows {number} units.",
    "We have received your application for a residents parking permit.",
    "Your insurance policy {number} will renew automatically next month.",
    "Please keep this letter with your important household documents.",
    "The school will be closed for staff training on {date}.",
    "A replacement bank card has been sent to your registered address.",
    "We noticed a payment of {amount} pounds that did not match your direct debit.",
    "Your pension statement shows contributions of {amount} pounds this year.",
    "The landlord has agreed to repair the kitchen window before winter.",
    "Doctor {name} has asked us to arrange a follow up appointment.",
    "Please bring this letter and a form of identification to the appointment.",
    "The recycling collection day in your street changes to {weekday}.",
    "We are sorry for the delay and appreciate your patience.",
    "The warranty for your washing machine expires on {date}.",
    "Meter readings can also be submitted through our website.",
    "Your electricity tariff will change from the first of next month.",
    "The garden waste subscription costs {amount} pounds per year.",
    "Please check that the details below are correct and tell us about any changes.",
]
_SENTENCES_DE = [
    "Vielen Dank für Ihr Schreiben vom {date} zu Ihrem Vertrag {number}.",
    "Die jährliche Wartung Ihrer Heizungsanlage ist für den {date} geplant.",
    "Bitte überweisen Sie den offenen Betrag von {amount} Euro bis zum Monatsende.",
    "Unser Techniker kommt zwischen acht und zwölf Uhr zu Ihnen.",
    "Die Nebenkostenabrechnung für das vergangene Jahr liegt diesem Brief bei.",
    "Ihre Versicherungsnummer lautet {number} und bleibt unverändert.",
    "Die Müllabfuhr in Ihrer Straße findet künftig am {weekday} statt.",
    "Bitte bewahren Sie dieses Schreiben zusammen mit Ihren Unterlagen auf.",
    "Der Zählerstand Ihres Wasserzählers betrug am {date} genau {number} Kubikmeter.",
    "Wir bedauern die Verzögerung und danken Ihnen für Ihre Geduld.",
    "Für Rückfragen erreichen Sie unseren Kundenservice werktags bis achtzehn Uhr.",
    "Die Grundsteuer für Ihr Grundstück beträgt {amount} Euro im Jahr.",
]
_NAMES = ["Okafor", "Lindqvist", "Patel", "Moreau", "Schneider", "Nakamura", "Byrne", "Costa"]
_WEEKDAYS_EN = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
_WEEKDAYS_DE = ["Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag"]
_MONTHS = ["January", "March", "April", "June", "August", "October", "November"]


def letter_text(*, seed: int, sentences: int = 22, german: bool = False) -> str:
    """A letter of about one A4 page: a greeting, paragraphs, a signature."""
    rng = random.Random(seed)
    pool = _SENTENCES_DE if german else _SENTENCES_EN
    weekdays = _WEEKDAYS_DE if german else _WEEKDAYS_EN

    def fill(template: str) -> str:
        return template.format(
            date=f"{rng.randint(1, 28)} {rng.choice(_MONTHS)} {rng.randint(2019, 2026)}",
            number=f"{rng.randint(100000, 999999)}",
            amount=f"{rng.randint(12, 980)}.{rng.randint(10, 99)}",
            band=rng.choice("ABCDEF"),
            name=rng.choice(_NAMES),
            weekday=rng.choice(weekdays),
        )

    chosen = [fill(rng.choice(pool)) for _ in range(sentences)]
    paragraphs = [" ".join(chosen[i : i + 4]) for i in range(0, len(chosen), 4)]
    greeting = "Sehr geehrte Frau " if german else "Dear Ms "
    closing = "Mit freundlichen Grüßen" if german else "Yours sincerely"
    name = rng.choice(_NAMES)
    return "\n\n".join([f"{greeting}{name},", *paragraphs, closing, rng.choice(_NAMES)])


def text_page_image(text: str, *, dpi: int = SCAN_DPI, fontsize: float = 11) -> Image.Image:
    """`text` typeset on an A4 page and rendered to a grey image at `dpi`."""
    doc = pymupdf.open()
    page = doc.new_page(width=A4.width, height=A4.height)
    box = pymupdf.Rect(72, 72, A4.width - 72, A4.height - 72)
    if page.insert_textbox(box, text, fontsize=fontsize, fontname="helv") < 0:
        raise ValueError("the text does not fit on one page")
    pixmap = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY)
    return Image.frombytes("L", (pixmap.width, pixmap.height), pixmap.samples)


def degrade(image: Image.Image, *, seed: int, angle: float, noise: float = 0.02) -> Image.Image:
    """What a scanner or a phone does to a page: a slight tilt, speckles, a
    little blur, a grey background."""
    rng = random.Random(seed)
    tilted = image.rotate(angle, resample=Image.Resampling.BICUBIC, expand=False, fillcolor=255)
    pixels = tilted.load()
    width, height = tilted.size
    for _ in range(int(width * height * noise / 10)):
        x, y = rng.randrange(width), rng.randrange(height)
        pixels[x, y] = rng.choice((0, 90, 160, 255))
    background = Image.new("L", tilted.size, 236)
    softened = tilted.filter(ImageFilter.GaussianBlur(0.6))
    return Image.composite(softened, background, softened.point(lambda v: 255 if v < 200 else 0))


def scan_image(text: str, *, seed: int = 0, angle: float = 0.7, dpi: int = SCAN_DPI) -> Image.Image:
    return degrade(text_page_image(text, dpi=dpi), seed=seed, angle=angle)


def scanned_pdf(texts: list[str], *, dpi: int = SCAN_DPI, seed: int = 0) -> bytes:
    """One image-only A4 page per text, as a scanner makes them (JPEG, no text layer)."""
    doc = pymupdf.open()
    for number, text in enumerate(texts):
        image = scan_image(text, seed=seed + number, angle=0.4 + 0.3 * (number % 3), dpi=dpi)
        buffer = io.BytesIO()
        image.save(buffer, format="JPEG", quality=80)
        page = doc.new_page(width=A4.width, height=A4.height)
        page.insert_image(page.rect, stream=buffer.getvalue())
    return doc.tobytes(garbage=3, deflate=True)


# EXIF orientation → the rotation that puts a correctly drawn image into the
# stored (sideways) state; a viewer applies the inverse.
_STORED_AS = {
    1: None,
    3: Image.Transpose.ROTATE_180,
    6: Image.Transpose.ROTATE_90,
    8: Image.Transpose.ROTATE_270,
}
EXIF_ORIENTATION = 0x0112


def photo_image(text: str, *, seed: int = 0, angle: float = 1.5) -> Image.Image:
    """A phone photo of a label or a letter: the page on a darker desk, lit
    unevenly, tilted, noisy, in colour, at about 200 dpi."""
    page = degrade(text_page_image(text, dpi=200, fontsize=14), seed=seed, angle=angle)
    width, height = page.size
    desk = Image.new("RGB", (width + 160, height + 160), (96, 78, 60))
    shade = Image.linear_gradient("L").resize((width, height)).point(lambda v: 255 - v // 6)
    lit = Image.merge(
        "RGB",
        [
            Image.composite(page, Image.new("L", page.size, 0), shade).point(lambda v, k=k: v * k)
            for k in (1.0, 0.98, 0.93)
        ],
    )
    desk.paste(lit, (80, 80))
    draw = ImageDraw.Draw(desk)
    draw.rectangle((0, 0, width + 159, 30), fill=(60, 50, 40))  # the edge of the desk
    return desk


def photo_bytes(text: str, *, format: str = "PNG", orientation: int = 6, seed: int = 0) -> bytes:
    """`photo_image` saved the way a phone stores a picture taken sideways:
    the pixels rotated, with an EXIF orientation tag that says how to show them."""
    image = photo_image(text, seed=seed)
    transpose = _STORED_AS[orientation]
    stored = image.transpose(transpose) if transpose is not None else image
    exif = Image.Exif()
    exif[EXIF_ORIENTATION] = orientation
    buffer = io.BytesIO()
    options = {"quality": 85} if format == "JPEG" else {}
    stored.save(buffer, format=format, exif=exif.tobytes(), **options)
    return buffer.getvalue()


def zip_bomb_docx(*, declared_mb: int = 64) -> bytes:
    """A .docx whose document part inflates to `declared_mb` megabytes of
    zeros: the archive itself is a few megabytes at most."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr("[Content_Types].xml", _CONTENT_TYPES)
        archive.writestr("_rels/.rels", _RELS)
        with archive.open("word/document.xml", "w", force_zip64=True) as entry:
            block = b"\0" * (1024 * 1024)
            for _ in range(declared_mb):
                entry.write(block)
    return buffer.getvalue()


_CONTENT_TYPES = (
    '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/'
    'package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-'
    'officedocument.wordprocessingml.document.main+xml"/></Types>'
)
_RELS = (
    '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.'
    'org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats'
    '.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/>'
    "</Relationships>"
)


def docx_bytes(
    *,
    title: str,
    sections: list[tuple[str, list[str]]],
    table: list[list[str]] | None = None,
    table_after: int = 0,
) -> bytes:
    """A Word document: a Title, then (heading, paragraphs) sections; `table`
    (first row the header) goes after section `table_after`."""
    document = docx.Document()
    document.add_heading(title, level=0)
    for index, (heading, paragraphs) in enumerate(sections):
        document.add_heading(heading, level=1)
        for paragraph in paragraphs:
            document.add_paragraph(paragraph)
        if table and index == table_after:
            grid = document.add_table(rows=len(table), cols=len(table[0]))
            for r, row in enumerate(table):
                for c, value in enumerate(row):
                    grid.cell(r, c).text = value
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def pptx_bytes(slides: list[tuple[str, str, str]]) -> bytes:
    """A presentation of (title, body text, speaker notes) slides."""
    presentation = pptx.Presentation()
    layout = presentation.slide_layouts[1]  # title and content
    for title, body, notes in slides:
        slide = presentation.slides.add_slide(layout)
        slide.shapes.title.text = title
        slide.placeholders[1].text_frame.text = body
        if notes:
            slide.notes_slide.notes_text_frame.text = notes
    buffer = io.BytesIO()
    presentation.save(buffer)
    return buffer.getvalue()


def xlsx_bytes(sheets: dict[str, list[list[object]]]) -> bytes:
    """A workbook with one sheet per name, rows as given (first row the header)."""
    workbook = openpyxl.Workbook()
    workbook.remove(workbook.active)
    for name, rows in sheets.items():
        sheet = workbook.create_sheet(name)
        for row in rows:
            sheet.append(row)
    buffer = io.BytesIO()
    workbook.save(buffer)
    return buffer.getvalue()


def chart_image(*, seed: int = 0, size: tuple[int, int] = (640, 400)) -> bytes:
    """A bar chart as a PNG: what a figure in a report looks like to a parser."""
    rng = random.Random(seed)
    image = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(image)
    width, height = size
    draw.line((40, height - 40, width - 20, height - 40), fill="black", width=2)
    draw.line((40, 20, 40, height - 40), fill="black", width=2)
    bars = 8
    for index in range(bars):
        value = rng.randint(40, height - 80)
        x0 = 60 + index * (width - 100) // bars
        draw.rectangle((x0, height - 40 - value, x0 + 30, height - 41), fill=(60, 110, 200))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def pdf_with_figure(*, body: str, caption: str, chart: bytes | None = None) -> bytes:
    """A one-page report: a paragraph, a chart image, and its caption below it."""
    doc = pymupdf.open()
    page = doc.new_page(width=A4.width, height=A4.height)
    page.insert_textbox(pymupdf.Rect(72, 72, A4.width - 72, 200), body, fontsize=11)
    figure_box = pymupdf.Rect(100, 220, A4.width - 100, 520)
    page.insert_image(figure_box, stream=chart or chart_image())
    page.insert_textbox(
        pymupdf.Rect(100, 530, A4.width - 100, 600), caption, fontsize=9, fontname="helv"
    )
    return doc.tobytes()
