"""The client's address, which the sign-in throttle counts by, cannot be
forged with X-Forwarded-For: Jarvis believes the header only from the proxy it
trusts, reads it from the right, and the shipped nginx vhost replaces it.

The live tests start daphne exactly as deploy/jarvis-web.service.in does and
send each request as the shipped nginx vhost would forward it."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest
from django.conf import settings

from apps.accounts.models import LoginFailure
from apps.core.proxy import client_address
from jarvis_site.env import env_networks
from tests.core.test_deploy_files import render
from tests.support.processes import ROOT, child_env, daphne_server, free_port, wait_for_port

SITE = "jarvis.home.arpa"  # the server name deploy/jarvis.env.example is written for
ATTACKER = "198.51.100.7"  # where the guesser really connects from


# --- The rule ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("peer", "forwarded_for", "expected"),
    [
        ("127.0.0.1", "198.51.100.7", "198.51.100.7"),  # nginx's one entry
        ("127.0.0.1", "6.6.6.6, 198.51.100.7", "198.51.100.7"),  # an appending proxy
        ("127.0.0.1", "6.6.6.6, 198.51.100.7, 127.0.0.1", "198.51.100.7"),  # two proxies
        ("127.0.0.1", "junk, 198.51.100.7", "198.51.100.7"),
        ("127.0.0.1", "198.51.100.7, junk", "127.0.0.1"),  # a hop nobody can vouch for
        ("127.0.0.1", "", "127.0.0.1"),
        ("127.0.0.1", None, "127.0.0.1"),
        ("192.0.2.50", "6.6.6.6", "192.0.2.50"),  # not a trusted proxy: header ignored
        ("::1", "2001:db8::7", "2001:db8::7"),
    ],
)
def test_the_client_is_the_right_most_untrusted_hop(settings, peer, forwarded_for, expected):
    settings.TRUSTED_PROXIES = env_networks("UNUSED", ["127.0.0.1", "::1"])
    assert client_address(peer=peer, forwarded_for=forwarded_for) == expected


def test_no_proxy_is_trusted_unless_configured(settings):
    settings.TRUSTED_PROXIES = []
    assert client_address(peer="127.0.0.1", forwarded_for="6.6.6.6") == "127.0.0.1"


# --- The deploy path, live ---------------------------------------------------------


def nginx_forwards(location: str, client_headers: dict[str, str], *, remote_addr: str):
    """The headers nginx sends upstream for a request to `location`, following
    the shipped vhost's proxy_set_header lines (other headers pass unchanged)."""
    vhost = render("nginx-jarvis.conf.in")
    block = re.search(rf"location {re.escape(location)} \{{(.*?)\n    \}}", vhost, re.S)[1]
    directives = re.findall(r"proxy_set_header (\S+) (\S+);", block)
    client_xff = client_headers.get("X-Forwarded-For")
    variables = {
        "$remote_addr": remote_addr,
        "$proxy_add_x_forwarded_for": f"{client_xff}, {remote_addr}" if client_xff else remote_addr,
        "$host": SITE,
        "$scheme": "https",
        "$http_upgrade": "",
        "$connection_upgrade": "close",
    }
    replaced = {name.lower() for name, _ in directives}
    headers = {k: v for k, v in client_headers.items() if k.lower() not in replaced}
    for name, value in directives:
        assert value in variables, f"the test does not know nginx's {value}"
        if variables[value]:  # nginx drops a header whose value is empty
            headers[name] = variables[value]
    return headers


@contextmanager
def daphne_as_the_unit_runs_it(**env: str) -> Iterator[str]:
    unit = render("jarvis-web.service.in")
    command = re.search(r"^ExecStart=(.+)$", unit, re.M)[1]
    port = free_port()
    argv = shlex.split(command.replace(" 8000 ", f" {port} "))
    assert argv[:3] == ["/opt/jarvis/.venv/bin/python", "-m", "daphne"], argv
    argv[0] = sys.executable  # this checkout's interpreter stands in for the install's
    example = (ROOT / "deploy" / "jarvis.env.example").read_text()
    unit_env = dict(re.findall(r"^(JARVIS_[A-Z_]+)=(.*)$", example, re.M))
    for name in ("JARVIS_DATA_DIR", "JARVIS_VAULTS_ROOT"):
        unit_env.pop(name)  # the test's data dir stands in for /var/lib/jarvis
    # The example leaves HTTPS at its default for DEBUG off, which is on; the
    # test settings would otherwise turn it off.
    unit_env["JARVIS_HTTPS"] = "true"
    process = subprocess.Popen(argv, env=child_env(**{**unit_env, **env}), cwd=ROOT)
    try:
        wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def guess_through_nginx(base: str, n: int) -> int:
    """One wrong password for olivia from the attacker, who sends a new
    X-Forwarded-For each time, through nginx as the vhost configures it."""
    forged = {"X-Forwarded-For": f"203.0.113.{n}", "User-Agent": "guesser"}
    with httpx.Client(base_url=base, timeout=30) as client:
        page = client.get(
            "/accounts/login/", headers=nginx_forwards("/", forged, remote_addr=ATTACKER)
        )
        assert page.status_code == 200, page.status_code
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)[1]
        csrf_cookie = page.cookies[settings.CSRF_COOKIE_NAME]
        headers = {**forged, "Origin": f"https://{SITE}", "Cookie": f"csrftoken={csrf_cookie}"}
        response = client.post(
            "/accounts/login/",
            data={"username": "olivia", "password": "wrong", "csrfmiddlewaretoken": token},
            headers=nginx_forwards("/", headers, remote_addr=ATTACKER),
        )
    return response.status_code


@pytest.mark.django_db(transaction=True)
def test_forged_forwarded_for_through_the_deployed_path_is_still_throttled(owner):
    limit = settings.LOGIN_FAILURES_PER_USERNAME
    with daphne_as_the_unit_runs_it() as base:
        statuses = [guess_through_nginx(base, n) for n in range(limit + 3)]
    assert statuses[:limit] == [200] * limit  # checked, and wrong
    assert statuses[limit:] == [429] * 3
    assert set(LoginFailure.objects.values_list("ip", flat=True)) == {ATTACKER}


@pytest.mark.django_db(transaction=True)
def test_forged_forwarded_for_straight_to_daphne_is_ignored(owner):
    # `make run`: no proxy in front and none trusted; the header is the client's invention.
    limit = settings.LOGIN_FAILURES_PER_USERNAME
    statuses = []
    with daphne_server() as base:
        for n in range(limit + 2):
            with httpx.Client(base_url=base, timeout=30) as client:
                page = client.get("/accounts/login/")
                token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)[1]
                response = client.post(
                    "/accounts/login/",
                    data={"username": "olivia", "password": "wrong", "csrfmiddlewaretoken": token},
                    headers={"X-Forwarded-For": f"203.0.113.{n}"},
                )
                statuses.append(response.status_code)
    assert statuses[limit:] == [429, 429]
    assert set(LoginFailure.objects.values_list("ip", flat=True)) == {"127.0.0.1"}
