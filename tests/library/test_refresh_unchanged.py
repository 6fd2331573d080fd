"""Fetching a web page again that has not changed makes no new version."""

from __future__ import annotations

import pytest
from django.test import Client

from apps.library.models import Document
from tests.fakes.web import FakeWeb

ARTICLE = (
    "<html><head><title>Composting at home</title></head><body><article><h1>Composting</h1>"
    "<p>Turn the heap every two weeks; mix greens and browns in equal parts.</p>"
    "</article></body></html>"
)


@pytest.fixture
def web(settings):
    with FakeWeb() as fake:
        settings.FETCH_ALLOW_HOSTS = [fake.host_port]
        yield fake


def test_a_refresh_of_an_unchanged_page_records_no_new_version(owner, web):
    web.page("/compost", ARTICLE)
    client = Client()
    client.force_login(owner)
    client.post("/library/add/url/", {"url": web.url("/compost")})
    again = client.post("/library/add/url/", {"url": web.url("/compost"), "refresh": "1"})
    assert again.status_code == 200
    assert "has not changed since it was fetched" in again.content.decode()
    assert Document.objects.filter(kind="web").count() == 1
    # A changed page still becomes a new version.
    web.page("/compost", ARTICLE.replace("two weeks", "three weeks"))
    client.post("/library/add/url/", {"url": web.url("/compost"), "refresh": "1"})
    assert Document.objects.filter(kind="web").count() == 2
