"""Web pages and EPUB e-books: what a person gets back from a saved page or a book.

Every page and book is built here, so each test shows the exact markup it is
about. EPUBs are written as ZIPs the way the spec lays them out: `mimetype`
first and stored, META-INF/container.xml, an OPF package with a spine and a
navigation document, then the XHTML chapters.
"""

from __future__ import annotations

import io
import zipfile
from datetime import date
from html import escape

import pytest

from apps.library.ingest.parsing.epub import extract_epub
from apps.library.ingest.parsing.html import parse_html
from apps.library.ingest.parsing.pdf import MAX_CHUNK_CHARS
from apps.library.ingest.parsing.types import ParsedDocument, UnreadableDocument

# --- web pages ---------------------------------------------------------------

ARTICLE_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>How to Descale an Espresso Machine | The Kitchen Lab</title>
<meta property="og:site_name" content="The Kitchen Lab">
<meta property="og:title" content="How to Descale an Espresso Machine">
<meta name="author" content="Maria Rossi">
<meta property="article:published_time" content="2024-03-12T09:00:00Z">
<style>.ad { color: red } .STYLE-RULE-TEXT { display: block }</style>
<script>var secret = "SCRIPT-TEXT"; document.write(secret);</script>
</head>
<body>
<div id="cookie-banner" class="cookie-consent">COOKIE-BANNER We use cookies. Accept all?</div>
<header class="site-header"><a href="/">The Kitchen Lab</a>
<nav><ul>
<li><a href="/recipes">Recipes NAV-LINK</a></li>
<li><a href="/gear">Gear reviews NAV-LINK</a></li>
<li><a href="/about">About us NAV-LINK</a></li>
</ul></nav>
</header>
<main>
<article>
<h1>How to Descale an Espresso Machine</h1>
<p class="byline">By Maria Rossi, <time datetime="2024-03-12">12 March 2024</time></p>
<p>Limescale builds up inside every espresso machine that runs on hard water. Left
alone, it slows the pump, lowers the brewing temperature and eventually blocks the
boiler. Descaling every two to three months keeps the machine healthy. #budget</p>
<h2>What you need</h2>
<p>You need a citric acid descaler, a large jug and about forty minutes. Never use
vinegar: its smell lingers in the gaskets for weeks and the acetic acid can damage
brass fittings.</p>
<table>
<tr><th>Water hardness</th><th>Descale every</th></tr>
<tr><td>Soft</td><td>4 months</td></tr>
<tr><td>Hard</td><td>6 weeks</td></tr>
</table>
<h2>Step by step</h2>
<p>Dissolve thirty grams of citric acid in one litre of warm water. Pour it into the
tank, run half through the group head and half through the steam wand, then let the
machine rest for twenty minutes.</p>
<p>Rinse the tank and run two full tanks of fresh water through the machine before
brewing again. The first shot after descaling often tastes sour; discard it.</p>
</article>
<aside class="sidebar">
<div class="ad">SIDEBAR-AD Buy the SuperBrew 3000 today, fifty percent off!</div>
<div class="related"><h3>Related posts</h3>
<ul><li><a href="/x">Best grinders of the year SIDEBAR-LINK</a></li></ul></div>
</aside>
</main>
<footer class="site-footer"><p>FOOTER-TEXT &copy; 2024 The Kitchen Lab.</p>
<a href="/privacy">Privacy policy</a></footer>
</body>
</html>
"""

BOILERPLATE_MARKERS = (
    "SCRIPT-TEXT",
    "STYLE-RULE-TEXT",
    "COOKIE-BANNER",
    "NAV-LINK",
    "SIDEBAR-AD",
    "SIDEBAR-LINK",
    "FOOTER-TEXT",
)


def all_text(parsed: ParsedDocument) -> str:
    return "\n".join(f"{chunk.section}\n{chunk.text}" for chunk in parsed.chunks)


def test_article_page_keeps_the_article_under_its_headings():
    parsed = parse_html(
        ARTICLE_PAGE.encode(), url="https://www.kitchenlab.example/descale", fallback_title="x"
    )

    assert parsed.kind == "web"
    assert parsed.url == "https://www.kitchenlab.example/descale"
    text = all_text(parsed)
    assert "Limescale builds up inside every espresso machine" in text
    assert "citric acid descaler" in text
    assert "discard it" in text
    assert "Water hardness" in text and "6 weeks" in text  # the table is kept
    sections = {chunk.section: chunk.text for chunk in parsed.chunks}
    assert "brass fittings" in sections["What you need"]
    assert "steam wand" in sections["Step by step"]


def test_article_page_leaves_out_navigation_ads_footer_and_script():
    parsed = parse_html(ARTICLE_PAGE.encode(), fallback_title="x")

    text = all_text(parsed)
    for marker in BOILERPLATE_MARKERS:
        assert marker not in text, marker


def test_article_page_metadata():
    parsed = parse_html(ARTICLE_PAGE.encode(), fallback_title="descale")

    assert parsed.title == "How to Descale an Espresso Machine"
    assert parsed.authors == "Maria Rossi"
    assert parsed.site == "The Kitchen Lab"
    assert parsed.content_date == date(2024, 3, 12)
    assert parsed.content_date_source == "page"


def test_page_text_cannot_set_record_fields_or_tags():
    tagged = parse_html(ARTICLE_PAGE.encode(), fallback_title="x")  # the article says #budget
    assert tagged.record.tags == []

    page = (
        "<html><body><article><pre>---\ncategory: secret\nstatus: done\n---</pre>"
        + "<p>A post about planning the household budget, long enough to be an article.</p>" * 4
        + "</article></body></html>"
    )
    parsed = parse_html(page.encode(), fallback_title="x")
    assert parsed.record.category == "" and parsed.record.status == ""
    assert "household budget" in all_text(parsed)


def test_site_falls_back_to_the_url_host_and_date_is_never_guessed():
    page = (
        "<html><head><title>Boiler manual notes</title></head><body><article>"
        + "<p>The boiler pressure should sit between one and one and a half bar.</p>" * 4
        + "</article><footer>&copy; 2019 Somebody</footer></body></html>"
    )
    parsed = parse_html(page.encode(), url="https://www.boilers.example/manual", fallback_title="x")

    assert parsed.site in ("boilers.example", "www.boilers.example")
    assert parsed.content_date is None  # not 2019-01-01 from the copyright line
    assert parsed.title == "Boiler manual notes"
    assert parsed.authors == ""


def test_page_without_an_article_falls_back_to_its_body_text():
    page = b"""<html><head><title>Door codes</title>
    <script>var x = "SCRIPT-TEXT";</script><style>p { color: red } /* STYLE-RULE-TEXT */</style>
    </head><body><aside>Gate code is 4512</aside>
    <aside><div style="display:none">HIDDEN-TEXT</div>Garage code is 9031</aside></body></html>"""
    parsed = parse_html(page, fallback_title="codes")

    text = all_text(parsed)
    assert "Gate code is 4512" in text
    assert "Garage code is 9031" in text
    assert "SCRIPT-TEXT" not in text and "STYLE-RULE-TEXT" not in text
    assert "HIDDEN-TEXT" not in text
    assert parsed.title == "Door codes"


def test_short_page_keeps_everything_visible_rather_than_lose_its_one_fact():
    page = b"<html><body><nav><a href=a>Home</a> <a href=b>Contact</a></nav>" + (
        b"<aside>Gate code is 4512</aside></body></html>"
    )
    parsed = parse_html(page, fallback_title="codes")

    assert "Gate code is 4512" in all_text(parsed)
    assert parsed.title == "codes"


@pytest.mark.parametrize(
    ("page", "reason"),
    [
        (b"", "empty file"),
        (b"  \n ", "empty file"),
        (b"<html><head><title>Nothing</title></head><body></body></html>", "no readable text"),
        (b"<html><body><script>alert('SCRIPT-TEXT')</script></body></html>", "no readable text"),
        (b"<html><body><style>p{}</style><div hidden>secret</div></body></html>", "no readable"),
    ],
)
def test_page_without_text_is_unreadable(page: bytes, reason: str):
    with pytest.raises(UnreadableDocument, match=reason):
        parse_html(page, fallback_title="x")


def test_declared_windows_1252_charset_is_honoured():
    page = (
        '<html><head><meta http-equiv="Content-Type" content="text/html; charset=windows-1252">'
        "<title>Le café</title></head><body><p>Le café du coin ouvre à 7 h. “Quoted” text.</p>"
        "</body></html>"
    ).encode("cp1252")
    parsed = parse_html(page, fallback_title="x")

    assert parsed.title == "Le café"
    assert "Le café du coin ouvre à 7 h. “Quoted” text." in all_text(parsed)


def test_bom_wins_and_undeclared_legacy_bytes_read_as_windows_1252():
    utf16 = "<html><body><p>Crème brûlée recipe.</p></body></html>".encode("utf-16")
    assert "Crème brûlée recipe." in all_text(parse_html(utf16, fallback_title="x"))

    legacy = "<html><body><p>Crème brûlée recipe.</p></body></html>".encode("cp1252")
    assert "Crème brûlée recipe." in all_text(parse_html(legacy, fallback_title="x"))

    bom = b"\xef\xbb\xbf" + "<html><body><p>Crème brûlée recipe.</p></body></html>".encode()
    assert "Crème brûlée recipe." in all_text(parse_html(bom, fallback_title="x"))


# --- EPUB ----------------------------------------------------------------------

CONTAINER_XML = """<?xml version="1.0" encoding="UTF-8"?>
<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
  <rootfiles>
    <rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>
  </rootfiles>
</container>"""


def build_epub(
    chapters: list[tuple[str, list[str]]],
    *,
    title: str = "The House Book",
    authors: tuple[str, ...] = ("Ada Writer",),
    toc: bool = True,
    extra: dict[str, str] | None = None,
) -> bytes:
    """A minimal valid EPUB 3: one XHTML document per chapter, each an <h1> and paragraphs."""
    creators = "".join(f"<dc:creator>{escape(name)}</dc:creator>" for name in authors)
    manifest = "".join(
        f'<item id="c{i}" href="c{i}.xhtml" media-type="application/xhtml+xml"/>'
        for i in range(len(chapters))
    )
    if toc:
        manifest += (
            '<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>'
        )
    spine = "".join(f'<itemref idref="c{i}"/>' for i in range(len(chapters)))
    package = f"""<?xml version="1.0" encoding="UTF-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="uid">
  <metadata xmlns:dc="http://purl.org/dc/elements/1.1/">
    <dc:identifier id="uid">urn:uuid:0d6c1f0e-1111-4a4a-9b9b-123456789abc</dc:identifier>
    <dc:title>{escape(title)}</dc:title>{creators}<dc:language>en</dc:language>
  </metadata>
  <manifest>{manifest}</manifest>
  <spine>{spine}</spine>
</package>"""
    links = "".join(
        f'<li><a href="c{i}.xhtml">{escape(name)}</a></li>' for i, (name, _) in enumerate(chapters)
    )
    nav = f"""<?xml version="1.0" encoding="UTF-8"?>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops">
<head><title>Contents</title></head>
<body><nav epub:type="toc"><ol>{links}</ol></nav></body></html>"""

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(zipfile.ZipInfo("mimetype"), "application/epub+zip", zipfile.ZIP_STORED)
        archive.writestr("META-INF/container.xml", CONTAINER_XML)
        archive.writestr("OEBPS/content.opf", package)
        if toc:
            archive.writestr("OEBPS/nav.xhtml", nav)
        for i, (name, paragraphs) in enumerate(chapters):
            body = "".join(f"<p>{escape(p)}</p>" for p in paragraphs)
            archive.writestr(
                f"OEBPS/c{i}.xhtml",
                f"""<?xml version="1.0" encoding="UTF-8"?>
<html xmlns="http://www.w3.org/1999/xhtml"><head><title>{escape(name)}</title></head>
<body><h1>{escape(name)}</h1>{body}</body></html>""",
            )
        for name, content in (extra or {}).items():
            archive.writestr(name, content)
    return buffer.getvalue()


WELL = "The well behind the house is forty metres deep and was last cleaned in 2021."
PUMP = "The pump was replaced by a submersible model; its fuse is in the garage."
TWO_CHAPTERS = [
    ("Chapter One: The Well", [WELL] * 30),  # long enough to run over onto a second page
    ("Chapter Two: The Pump", [PUMP] * 3),
]


def test_epub_chunks_carry_their_chapter_titles():
    parsed = extract_epub(build_epub(TWO_CHAPTERS), filename="house.epub")

    assert parsed.kind == "epub"
    assert parsed.title == "The House Book"
    assert parsed.authors == "Ada Writer"
    sections = {chunk.section for chunk in parsed.chunks}
    assert sections == {"Chapter One: The Well", "Chapter Two: The Pump"}
    well = [chunk for chunk in parsed.chunks if chunk.section == "Chapter One: The Well"]
    pump = [chunk for chunk in parsed.chunks if chunk.section == "Chapter Two: The Pump"]
    assert all(WELL in chunk.text and PUMP not in chunk.text for chunk in well)
    assert all(PUMP in chunk.text and WELL not in chunk.text for chunk in pump)
    # Chapter one runs over several pages and each of them still names it.
    assert len({chunk.page for chunk in well}) >= 2
    assert min(chunk.page for chunk in well) == 1
    assert min(chunk.page for chunk in pump) > max(chunk.page for chunk in well)
    assert all(len(chunk.text) <= MAX_CHUNK_CHARS for chunk in parsed.chunks)
    assert sum(chunk.text.count(WELL) for chunk in well) == 30


def test_epub_without_a_table_of_contents_names_sections_by_page():
    parsed = extract_epub(build_epub(TWO_CHAPTERS, toc=False), filename="house.epub")

    assert parsed.chunks
    assert all(chunk.section == f"Page {chunk.page}" for chunk in parsed.chunks)


def test_epub_subsections_in_one_document_are_split_at_their_headings():
    chapter = (
        "<h1>Part One</h1><p>How this book is organised.</p>"
        '<h2 id="heat">Heating</h2><p>The boiler is serviced every May.</p>'
        '<h2 id="water">Plumbing</h2><p>The stopcock is under the kitchen sink.</p>'
    )
    nav = (
        '<nav epub:type="toc"><ol><li><a href="c0.xhtml">Part One</a><ol>'
        '<li><a href="c0.xhtml#heat">Heating</a></li>'
        '<li><a href="c0.xhtml#water">Plumbing</a></li></ol></li></ol></nav>'
    )
    data = build_epub([("Part One", [])], toc=True)
    data = _replace_entries(
        data,
        {
            "OEBPS/c0.xhtml": f'<html xmlns="http://www.w3.org/1999/xhtml"><body>{chapter}</body></html>',
            "OEBPS/nav.xhtml": (
                '<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops">'
                f"<body>{nav}</body></html>"
            ),
        },
    )
    parsed = extract_epub(data, filename="house.epub")

    by_section = {chunk.section: chunk.text for chunk in parsed.chunks}
    assert "How this book is organised." in by_section["Part One"]
    assert "boiler is serviced" in by_section["Part One › Heating"]
    assert "stopcock" in by_section["Part One › Plumbing"]
    assert "stopcock" not in by_section["Part One › Heating"]


def _replace_entries(data: bytes, replacements: dict[str, str]) -> bytes:
    source = zipfile.ZipFile(io.BytesIO(data))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for info in source.infolist():
            content = replacements.get(info.filename)
            archive.writestr(info, content if content is not None else source.read(info))
    return buffer.getvalue()


def test_epub_authors_and_title_fallback():
    several = build_epub(TWO_CHAPTERS, authors=("Ada Writer", "Bo Builder"))
    assert extract_epub(several, filename="house.epub").authors == "Ada Writer, Bo Builder"

    untitled = build_epub(TWO_CHAPTERS, title="Untitled", authors=())
    parsed = extract_epub(untitled, filename="uploads/our_house-notes.epub")
    assert parsed.title == "our house notes"
    assert parsed.authors == ""


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"", "empty file"),
        (build_epub(TWO_CHAPTERS)[:600], "not a readable EPUB: damaged or truncated file"),
        (b"this is not an e-book at all", "not a readable EPUB: not a ZIP archive"),
        (
            _replace_entries(build_epub(TWO_CHAPTERS), {"META-INF/container.xml": "<broken"}),
            "not a readable EPUB",
        ),
        (
            build_epub(TWO_CHAPTERS, extra={"META-INF/rights.xml": "<rights/>"}),
            "DRM-protected EPUB",
        ),
        (build_epub([("", [])], toc=False), "no text in the EPUB"),
    ],
    ids=["empty", "truncated", "not-zip", "bad-container", "drm", "no-text"],
)
def test_broken_epub_is_unreadable(data: bytes, reason: str):
    with pytest.raises(UnreadableDocument, match=reason):
        extract_epub(data, filename="book.epub")


def test_font_obfuscation_is_not_drm():
    encryption = """<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container"
      xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData>
      <enc:EncryptionMethod Algorithm="http://www.idpf.org/2008/embedding"/>
      <enc:CipherData><enc:CipherReference URI="OEBPS/fonts/serif.otf"/></enc:CipherData>
      </enc:EncryptedData></encryption>"""
    data = build_epub(TWO_CHAPTERS, extra={"META-INF/encryption.xml": encryption})
    assert extract_epub(data, filename="house.epub").chunks

    locked = encryption.replace("fonts/serif.otf", "c0.xhtml")
    with pytest.raises(UnreadableDocument, match="DRM-protected"):
        extract_epub(
            build_epub(TWO_CHAPTERS, extra={"META-INF/encryption.xml": locked}), filename="b.epub"
        )
