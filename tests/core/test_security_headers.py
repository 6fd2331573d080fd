"""Every response carries the security headers; errors are styled pages."""

import re
from pathlib import Path

import pytest
from asgiref.sync import async_to_sync
from django.test import AsyncClient, Client

from tests.support.processes import ROOT


def assert_security_headers(response):
    csp = response["Content-Security-Policy"]
    directives = dict(part.strip().split(" ", 1) for part in csp.split(";"))
    assert directives["script-src"] == "'self'"
    assert "unsafe-inline" not in directives["script-src"]
    assert "unsafe-eval" not in csp
    assert directives["frame-ancestors"] == "'none'"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["X-Frame-Options"] == "DENY"
    assert response["Referrer-Policy"] == "same-origin"


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/accounts/login/", "/no/such/page/", "/static/css/app.css"])
def test_security_headers_on_pages_errors_and_static_files(client, path):
    assert_security_headers(client.get(path))


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("path", ["/accounts/login/", "/no/such/page/", "/static/css/app.css"])
def test_the_async_stack_daphne_runs_carries_them_too(path):
    # daphne runs Django's async handler; its middleware stack is built apart.
    response = async_to_sync(AsyncClient().get)(path)
    assert_security_headers(response)
    if path.startswith("/static/"):
        assert response.status_code == 200
        assert b"".join(response.streaming_content if response.streaming else [response.content])


def test_signed_in_pages_carry_them_too(client, owner):
    client.force_login(owner)
    for path in ["/settings/", "/jobs/", "/chat/", "/library/", "/drafts/"]:
        response = client.get(path)
        assert response.status_code == 200, path
        assert_security_headers(response)


@pytest.mark.django_db
def test_an_unknown_url_gets_the_styled_404(client):
    response = client.get("/definitely/not/here/")
    assert response.status_code == 404
    assert b"There is nothing here" in response.content
    assert b"css/app.css" in response.content


def test_a_state_change_without_a_csrf_token_is_refused(owner):
    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    response = client.post("/settings/", {"display_name": "Mallory", "theme": "dark"})
    assert response.status_code == 403
    assert b"This form could not be checked" in response.content
    owner.refresh_from_db()
    assert owner.display_name == "Olivia"


def test_the_same_change_with_the_token_goes_through(owner):
    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    page = client.get("/settings/")
    token = page.context["csrf_token"]
    response = client.post(
        "/settings/", {"display_name": "Liv", "theme": "dark", "csrfmiddlewaretoken": token}
    )
    assert response.status_code == 302
    owner.refresh_from_db()
    assert owner.display_name == "Liv"


def test_the_500_page_renders_without_a_request():
    from django.template.loader import render_to_string

    html = render_to_string("500.html")
    assert "Something went wrong on the server" in html


INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.IGNORECASE)
INLINE_HANDLER = re.compile(r"\son[a-z]+\s*=", re.IGNORECASE)
INLINE_HTMX_CODE = re.compile(r"\bhx-on[:-]|\bhx-vars=|javascript:", re.IGNORECASE)


def templates():
    return sorted(Path(ROOT, "templates").rglob("*.html"))


@pytest.mark.parametrize("template", templates(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_template_carries_inline_script(template):
    text = template.read_text()
    assert not INLINE_SCRIPT.search(text)
    assert not INLINE_HANDLER.search(text)
    assert not INLINE_HTMX_CODE.search(text)


def test_a_view_may_allow_inline_styles_on_its_own_response_and_nothing_else(rf):
    from django.http import HttpResponse

    from apps.core.middleware import SecurityHeadersMiddleware, csp_allow_inline_styles

    def policy(response: HttpResponse) -> dict[str, str]:
        middleware = SecurityHeadersMiddleware(lambda request: response)
        csp = middleware(rf.get("/chat/1/", HTTP_HOST="localhost"))["Content-Security-Policy"]
        return dict(part.strip().split(" ", 1) for part in csp.split(";"))

    strict = policy(HttpResponse("page"))
    relaxed = policy(csp_allow_inline_styles(HttpResponse("terminal page")))
    assert strict["style-src"] == "'self'"
    assert relaxed["style-src"] == "'self' 'unsafe-inline'"
    # Only style-src moves: scripts, connections, frames and the rest stay as they were.
    assert {k: v for k, v in relaxed.items() if k != "style-src"} == {
        k: v for k, v in strict.items() if k != "style-src"
    }
    assert relaxed["script-src"] == "'self'"
