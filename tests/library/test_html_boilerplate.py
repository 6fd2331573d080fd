"""A web page keeps only its article: the site's menu, cookie banner, header and
footer are not indexed, whether the page is short or long, added by URL or
uploaded as a .html file; a page that is nothing but those is read whole."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from apps.library.ingest.parsing.html import parse_html
from apps.library.models import Document
from tests.fakes.web import FakeWeb

# A recipe blog as themes write them: a consent banner, a header with the
# site's name and menu, the recipe (short, well under trafilatura's minimum
# article size), a sidebar-free layout and a footer with links.
RECIPE_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>Quick pancakes – Anna's Kitchen</title>
<meta property="og:site_name" content="Anna's Kitchen">
</head>
<body class="post-template">
<div id="cookie-notice" class="cmplz-cookiebanner" role="dialog">
  <p>We use cookies to give you the best experience. CONSENT-TEXT</p>
  <a href="#accept">Accept all</a> <a href="#prefs">Preferences</a>
</div>
<header class="site-header">
  <a class="logo" href="/">Anna's Kitchen LOGO-TEXT</a>
  <nav class="main-nav"><ul>
    <li><a href="/">Home NAV-LINK</a></li>
    <li><a href="/recipes/">Recipes NAV-LINK</a></li>
    <li><a href="/about/">About Anna NAV-LINK</a></li>
  </ul></nav>
</header>
<main id="content">
  <article class="post">
    <header class="post-header"><h1>Quick pancakes</h1>
      <p class="byline">By Anna Berg</p></header>
    <h2>Batter</h2>
    <p>Whisk one egg, 200 ml milk and 100 g flour; rest it ten minutes.</p>
    <h2>Frying</h2>
    <p>Fry ladlefuls in butter, two minutes a side.</p>
  </article>
</main>
<footer class="site-footer">
  <p>&copy; 2024 Anna's Kitchen FOOTER-TEXT</p>
  <ul><li><a href="/privacy">Privacy policy FOOTER-LINK</a></li>
      <li><a href="/imprint">Imprint FOOTER-LINK</a></li></ul>
</footer>
</body></html>
"""

# The same kind of site built from <div>s: landmarks only by ARIA role and
# class, and a long article.
DIV_PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Bleeding a radiator</title></head>
<body>
<div class="gdpr-consent-bar">This site stores cookies on your device. CONSENT-TEXT</div>
<div class="top" role="navigation"><a href="/">Home NAV-LINK</a> <a href="/diy">DIY NAV-LINK</a>
  <a href="/heating">Heating NAV-LINK</a></div>
<div class="wrapper"><div class="content">
<h1>Bleeding a radiator</h1>
<p>A radiator that is cold at the top and warm at the bottom has air trapped inside it.
Bleeding lets the air out so hot water can fill the whole panel again, which makes the room
warm up faster and lowers the heating bill over a winter.</p>
<h2>Before you start</h2>
<p>Turn the heating off and wait until the radiators are cool. You need a radiator key and an
old cloth to catch the drips; a combination boiler may need topping up afterwards.</p>
<h2>Bleeding</h2>
<p>Hold the cloth under the valve at the top corner and turn the key a quarter turn
anticlockwise. Air hisses out; close the valve as soon as water appears. Check the boiler's
pressure gauge and top it up to about one and a half bar if it has dropped.</p>
</div></div>
<div class="bottom" role="contentinfo">FOOTER-TEXT Site by Heatwise Ltd. <a href="/terms">Terms FOOTER-LINK</a></div>
</body></html>
"""

BOILERPLATE = ("CONSENT-TEXT", "LOGO-TEXT", "NAV-LINK", "FOOTER-TEXT", "FOOTER-LINK")


def all_text(parsed) -> str:
    return "\n".join(f"{chunk.section}\n{chunk.text}" for chunk in parsed.chunks)


def test_a_short_page_keeps_its_article_and_not_the_menu_banner_or_footer():
    parsed = parse_html(
        RECIPE_PAGE.encode(), url="https://annas.example/pancakes/", fallback_title="pancakes"
    )

    text = all_text(parsed)
    for marker in BOILERPLATE:
        assert marker not in text, marker
    sections = {chunk.section: chunk.text for chunk in parsed.chunks}
    assert "200 ml milk" in sections["Batter"]
    assert "two minutes a side" in sections["Frying"]
    assert parsed.title.startswith("Quick pancakes")
    assert parsed.site == "Anna's Kitchen"


def test_a_page_of_divs_loses_its_menu_and_footer_by_their_roles_and_classes():
    parsed = parse_html(DIV_PAGE.encode(), fallback_title="radiator")

    text = all_text(parsed)
    for marker in ("CONSENT-TEXT", "NAV-LINK", "FOOTER-TEXT", "FOOTER-LINK"):
        assert marker not in text, marker
    sections = {chunk.section: chunk.text for chunk in parsed.chunks}
    assert "radiator key" in sections["Before you start"]
    assert "quarter turn" in sections["Bleeding"]
    assert parsed.title == "Bleeding a radiator"


def test_a_page_about_cookies_is_not_taken_for_a_cookie_banner():
    page = b"""<html><head><title>Oat cookies</title></head><body>
    <nav><a href="/">Home NAV-LINK</a></nav>
    <div class="cookie-recipe"><h1>Oat cookies</h1>
    <p>Cream 100 g butter with 80 g sugar, stir in 150 g oats and bake at 180 degrees.</p></div>
    </body></html>"""
    parsed = parse_html(page, fallback_title="cookies")

    text = all_text(parsed)
    assert "150 g oats" in text
    assert "NAV-LINK" not in text


def test_a_page_that_is_only_navigation_is_read_whole_rather_than_lost():
    page = b"""<html><head><title>Links</title></head><body>
    <nav><ul><li><a href="/wifi">Wifi password is on the router</a></li>
    <li><a href="/bins">Bins go out on Tuesday</a></li></ul></nav></body></html>"""
    parsed = parse_html(page, fallback_title="links")

    text = all_text(parsed)
    assert "Wifi password is on the router" in text
    assert "Bins go out on Tuesday" in text


def _signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def web(settings):
    with FakeWeb() as server:
        settings.FETCH_ALLOW_HOSTS = [server.host_port]
        yield server


def _indexed_text(document: Document) -> str:
    return " ".join(document.chunks.values_list("text", flat=True))


def test_a_page_added_by_url_is_indexed_without_its_menu_and_footer(
    owner, web, django_capture_on_commit_callbacks
):
    web.page("/pancakes", RECIPE_PAGE)
    with django_capture_on_commit_callbacks(execute=True):
        response = _signed_in(owner).post("/library/add/url/", {"url": web.url("/pancakes")})

    assert response.status_code == 200
    page = Document.objects.get(kind="web")
    assert page.status == "ready"
    text = _indexed_text(page)
    assert "200 ml milk" in text and "two minutes a side" in text
    for marker in BOILERPLATE:
        assert marker not in text, marker


def test_an_uploaded_html_file_is_read_the_same_way_as_a_page_added_by_url(
    owner, django_capture_on_commit_callbacks
):
    upload = SimpleUploadedFile("pancakes.html", RECIPE_PAGE.encode(), content_type="text/html")
    with django_capture_on_commit_callbacks(execute=True):
        _signed_in(owner).post("/library/add/upload/", {"files": [upload]})

    page = Document.objects.get(path="pancakes.html")
    assert (page.kind, page.status) == ("web", "ready")
    text = _indexed_text(page)
    assert "200 ml milk" in text
    for marker in BOILERPLATE:
        assert marker not in text, marker
