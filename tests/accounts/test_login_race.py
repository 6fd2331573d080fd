"""The sign-in throttle against a live server, attacked in parallel: thirty
wrong passwords for one name sent at once are not all checked, and another
person's right password from the same address still works."""

from __future__ import annotations

import re
import threading
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from django.conf import settings

from apps.accounts.models import LoginFailure
from tests.conftest import PASSWORD
from tests.support.processes import daphne_server

pytestmark = pytest.mark.django_db(transaction=True)

PARALLEL = 30


def browser(base: str) -> tuple[httpx.Client, str]:
    """A client that has loaded the sign-in page: its CSRF cookie and token."""
    client = httpx.Client(base_url=base, timeout=60)
    page = client.get("/accounts/login/").text
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    return client, token


def sign_in(client: httpx.Client, token: str, username: str, password: str) -> httpx.Response:
    return client.post(
        "/accounts/login/",
        data={"username": username, "password": password, "csrfmiddlewaretoken": token},
    )


def test_parallel_guesses_are_checked_at_most_up_to_the_limit(owner, member):
    limit = settings.LOGIN_FAILURES_PER_USERNAME
    with daphne_server() as base:
        browsers = [browser(base) for _ in range(PARALLEL)]
        start = threading.Barrier(PARALLEL)

        def guess(n: int) -> int:
            client, token = browsers[n]
            start.wait()  # all at once
            return sign_in(client, token, "olivia", f"wrong guess {n}").status_code

        with ThreadPoolExecutor(PARALLEL) as pool:
            statuses = list(pool.map(guess, range(PARALLEL)))

        checked = statuses.count(200)  # the form's "do not match" answer: the password was tried
        refused = statuses.count(429)
        assert checked + refused == PARALLEL, statuses
        assert checked <= limit, f"{checked} of {PARALLEL} parallel guesses were checked"
        assert LoginFailure.objects.filter(username="olivia").count() == checked

        # Max, behind the same home router (the same address), signs in.
        client, token = browser(base)
        response = sign_in(client, token, "max", PASSWORD)
        assert response.status_code == 302
        assert response.headers["location"] == "/"

        # Olivia herself is locked on this address, and told until when.
        client, token = browser(base)
        response = sign_in(client, token, "olivia", PASSWORD)
        assert response.status_code == 429
        assert re.search(r"Try again at \d\d:\d\d \(in about \d+ minutes?\)", response.text)
        for client, _ in browsers:
            client.close()
