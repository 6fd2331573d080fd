"""The server's half of the one error path: refusals say which way they go."""

from __future__ import annotations

import socket

import pytest

from apps.core.fetch import FetchError, fetch
from apps.core.refusals import SWAP_HEADER, refusal_response


def test_a_refusal_is_one_short_alert():
    response = refusal_response("the limit is 32,000", status=400)
    html = response.content.decode()
    assert response.status_code == 400
    assert 'role="alert"' in html and "data-refusal" in html
    assert "the limit is 32,000" in html
    assert SWAP_HEADER not in response


def test_an_invalid_host_fails_without_asking_the_resolver(monkeypatch):
    def no_dns(*args, **kwargs):
        raise AssertionError("the resolver was asked")

    monkeypatch.setattr(socket, "getaddrinfo", no_dns)
    with pytest.raises(FetchError, match=r"could not find no-such-kitchen\.invalid"):
        fetch("https://no-such-kitchen.invalid/recipe.html")


def test_the_add_page_refusal_is_its_result_row(client, owner):
    client.force_login(owner)
    response = client.post(
        "/library/add/url/", {"url": "ftp://files.example.org/x"}, headers={"HX-Request": "true"}
    )
    assert response.status_code == 400
    assert response[SWAP_HEADER] == "swap"
    assert "only http and https addresses can be fetched" in response.content.decode()
