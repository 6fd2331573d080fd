"""Signing in to a live server over plain HTTP, as a browser's form does."""

from __future__ import annotations

import re

import httpx


def csrf_token(client: httpx.Client, path: str) -> str:
    """The CSRF token of the form on `path` (the cookie comes with it)."""
    page = client.get(path).text
    return re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)[1]


def signed_in_client(
    base: str, username: str, password: str, *, timeout: float = 60
) -> httpx.Client:
    """An httpx client signed in through the login page of the server at `base`."""
    client = httpx.Client(base_url=base, timeout=timeout, follow_redirects=False)
    response = client.post(
        "/accounts/login/",
        data={
            "username": username,
            "password": password,
            "csrfmiddlewaretoken": csrf_token(client, "/accounts/login/"),
        },
    )
    assert response.status_code == 302, response.text
    return client
