"""The vendored xterm.js and PDF.js in a real browser, under the site's real
Content-Security-Policy.

The page is tests/support/static/test_support/vendor_libraries.html: a static
file that exists only while tests.support is installed, served by a real daphne
through SecurityHeadersMiddleware, so it carries the same policy as every page
(only /admin/ differs). Its module starts one library per load the way the
product pages will (see docs/architecture.md, "Vendored browser libraries") and
leaves what it saw in `window.vendorProof`.

The PDF comes from PyMuPDF and is handed to the browser at a same-origin URL;
everything else (modules, the PDF.js worker, its fallback decoders and fonts)
comes from daphne.
"""

from __future__ import annotations

import io

import pymupdf
import pytest
from PIL import Image

from tests.support.browser import collect_errors

pytestmark = pytest.mark.e2e

PROOF_PAGE = "/static/test_support/vendor_libraries.html"


def two_page_pdf() -> bytes:
    """Page 1 says hello; page 2 has Helvetica text (not embedded: the browser
    substitutes it), a Symbol line (drawn from PDF.js's standard fonts) and a
    red JPEG 2000 square (decoded by PDF.js's JavaScript fallback)."""
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 100), "First page says hello", fontsize=14)
    second = doc.new_page()
    second.insert_text((72, 100), "Second page: the quick brown fox", fontsize=14)
    second.insert_text((72, 150), "abgd", fontsize=14, fontname="Symbol")
    jpx = io.BytesIO()
    Image.new("RGB", (64, 64), (200, 30, 30)).save(jpx, "JPEG2000")
    second.insert_image(pymupdf.Rect(72, 200, 172, 300), stream=jpx.getvalue())
    return doc.tobytes()


def open_proof(page, url: str) -> dict:
    page.goto(url)
    page.wait_for_selector("body[data-state=done]")
    return page.evaluate("window.vendorProof")


def test_pdfjs_draws_page_two_with_its_text_layer_and_breaks_no_rule(page, live_server_url):
    page.route(
        f"{live_server_url}/proof.pdf",
        lambda route: route.fulfill(body=two_page_pdf(), content_type="application/pdf"),
    )
    errors = collect_errors(page)
    # PDF.js warns on the console (its worker's messages arrive here too) when
    # a decoder or font it wanted could not be had: none may be missing.
    warnings: list[str] = []
    page.on("console", lambda message: message.type == "warning" and warnings.append(message.text))
    proof = open_proof(page, f"{live_server_url}{PROOF_PAGE}?run=pdf&pdf=/proof.pdf&page=2")

    assert proof["errors"] == []
    assert proof["violations"] == []
    assert errors == []
    assert warnings == []
    pdf = proof["pdf"]
    assert pdf["pages"] == 2
    texts = [span["text"] for span in pdf["spans"]]
    assert texts == ["Second page: the quick brown fox", "αβγδ"]  # page 2, not page 1
    # Each piece of selectable text lies over glyphs drawn on the canvas.
    assert all(span["ink"] > 50 for span in pdf["spans"]), pdf["spans"]
    # The 100 pt square at scale 1.5 is 150 px a side: the JPEG 2000 was decoded.
    assert pdf["redPixels"] > 140 * 140


def test_xterm_writes_text_and_asks_the_site_policy_for_inline_styles_only(page, live_server_url):
    errors = collect_errors(page)
    proof = open_proof(page, f"{live_server_url}{PROOF_PAGE}?run=terminal")

    assert proof["errors"] == []
    terminal = proof["terminal"]
    assert terminal["cols"] > 40 and terminal["rows"] > 5  # the fit addon sized it
    assert terminal["text"] == "plain line\nred words and true colour"
    # xterm puts its theme and cell sizes in <style> elements and true-colour
    # cells in style attributes; the site's `style-src 'self'` refuses both, so
    # today its text is black on black. Nothing else is refused: no script,
    # worker or connection. The page that hosts the terminal needs
    # `style-src 'self' 'unsafe-inline'` (docs/architecture.md says why that is
    # safe there). If this fails because nothing is refused, xterm no longer
    # needs that exception: drop it.
    refused = {violation.split(" ", 1)[0] for violation in proof["violations"]}
    assert refused == {"style-src-elem", "style-src-attr"}
    assert all("/static/vendor/xterm/xterm.mjs:" in v for v in proof["violations"])
    assert terminal["plainColour"] == terminal["background"]
    assert errors and all("Applying inline style violates" in error for error in errors)
