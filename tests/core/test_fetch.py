"""The SSRF guard (apps/core/fetch.py). Nothing here touches the internet: pages
come from a local server (tests/fakes/web.py) and names from FakeDNS, which
refuses every name it was not given."""

from __future__ import annotations

import ipaddress
import socket
import tracemalloc

import httpx
import pytest

from apps.core import fetch as fetch_module
from apps.core.errors import JarvisError, Refused
from apps.core.fetch import (
    FetchError,
    FetchRefused,
    FetchResult,
    check_url,
    fetch,
    is_public_address,
)
from tests.fakes.web import FakeDNS, FakeWeb, drip, endless, make_tls

GB = 1024**3


@pytest.fixture
def dns(monkeypatch) -> FakeDNS:
    return FakeDNS(monkeypatch)


@pytest.fixture
def web(settings, dns):
    """A local server that the allow-list lets through (only it: 127.0.0.1:its port)."""
    settings.FETCH_ALLOW_HOSTS = []
    settings.ARXIV_API_URL = "https://export.arxiv.org/api"
    settings.ARXIV_PDF_URL = "https://arxiv.org/pdf"
    with FakeWeb() as server:
        settings.FETCH_ALLOW_HOSTS = [server.host_port]
        yield server


# --- is_public_address


@pytest.mark.parametrize(
    ("address", "public"),
    [
        ("93.184.215.14", True),
        ("1.1.1.1", True),
        ("8.8.8.8", True),
        ("2606:4700:4700::1111", True),
        ("2a00:1450:4001:82b::200e", True),
        ("::ffff:93.184.215.14", True),  # mapped public v4
        ("64:ff9b::808:808", True),  # NAT64 of 8.8.8.8
        ("2002:808:808::1", True),  # 6to4 of 8.8.8.8
        ("127.0.0.1", False),
        ("127.255.255.254", False),
        ("::1", False),
        ("10.0.0.1", False),
        ("172.16.0.1", False),
        ("172.31.255.255", False),
        ("192.168.1.1", False),
        ("fc00::1", False),
        ("fd12:3456::1", False),
        ("169.254.169.254", False),  # cloud metadata
        ("fe80::1", False),
        ("fe80::1%eth0", False),
        ("100.64.0.1", False),  # CGNAT
        ("100.127.255.254", False),
        ("224.0.0.1", False),  # multicast (Python calls it global)
        ("239.255.255.250", False),
        ("ff02::1", False),
        ("ff0e::1", False),
        ("0.0.0.0", False),  # noqa: S104
        ("0.1.2.3", False),
        ("::", False),
        ("255.255.255.255", False),  # broadcast
        ("240.0.0.1", False),  # reserved
        ("192.0.2.1", False),  # documentation
        ("198.51.100.7", False),
        ("203.0.113.9", False),
        ("198.18.0.1", False),  # benchmarking
        ("192.0.0.9", False),  # IETF assignments
        ("2001:db8::1", False),  # documentation
        ("3fff::1", False),
        ("2001::1", False),  # Teredo
        ("fec0::1", False),  # site-local
        ("100::1", False),  # discard
        ("::ffff:127.0.0.1", False),  # mapped
        ("::ffff:7f00:1", False),
        ("::ffff:10.0.0.1", False),
        ("::ffff:0:7f00:1", False),  # translated
        ("::127.0.0.1", False),  # IPv4-compatible
        ("64:ff9b::7f00:1", False),  # NAT64 of 127.0.0.1
        ("64:ff9b::a00:1", False),  # NAT64 of 10.0.0.1
        ("64:ff9b:1::a00:1", False),  # local-use NAT64
        ("2002:7f00:1::1", False),  # 6to4 of 127.0.0.1
        ("2002:c0a8:101::1", False),  # 6to4 of 192.168.1.1
        ("2002:a9fe:a9fe::", False),  # 6to4 of 169.254.169.254
        ("not an address", False),
        ("", False),
    ],
)
def test_is_public_address(address, public):
    assert is_public_address(address) is public
    if address and public:
        assert is_public_address(ipaddress.ip_address(address)) is True


# --- check_url: syntax (no DNS)


@pytest.mark.parametrize(
    "url",
    [
        "ftp://example.com/file",
        "file:///etc/passwd",
        "gopher://example.com/",
        "javascript:alert(1)",
        "data:text/html,hi",
        "example.com",
        "//example.com/",
        "http:example.com",
        "http:/example.com",
        "http://user:pass@example.com/",
        "http://user@example.com/",
        "http://:@example.com/",
        "http://example.com@127.0.0.1/",
        "http://127.0.0.1\\@example.com",
        "http://example.com\\@127.0.0.1/",
        "http://example.com/\\evil",
        "http:\\\\example.com\\",
        "http://exa mple.com/",
        "http://example.com/a b",
        " http://example.com/",
        "http://example.com/\t",
        "http://exa\tmple.com/",
        "http://example.com/\nHost: evil",
        "http://example.com/\r\n",
        "http://example.com/\x00",
        "http://example.com/\x7f",
        "http://exa\u200bmple.com/",  # zero-width space
        "http://example.com/\u202e",  # right-to-left override
        "http://example.com\u3000/",  # ideographic space
        "http://",
        "http:///path",
        "http://:80/",
        "http://./",
        "http://a..b/",
        "http://-example.com/",
        "http://" + "a" * 64 + ".com/",
        "http://" + "a." * 127 + "com/",
        "http://\U0001f600.com/",  # not IDNA-encodable
        "http://xn--a.com/",  # broken punycode
        "http://ex%61mple.com/",
        "http://example.com:0/",
        "http://example.com:65536/",
        "http://example.com:http/",
        "http://example.com:/",
        "http://example.com:80:80/",
        "http://::1/",
        "http://[::1/",
        "http://[::1]x/",
        "http://[not-v6]/",
        "http://[fe80::1%25eth0]/",
        "http://[::1]/",
        "http://[::]/",
        "http://[::ffff:127.0.0.1]/",
        "http://[::ffff:7f00:1]/",
        "http://[64:ff9b::a00:1]/",
        "http://[2002:7f00:1::1]/",
        "http://[fd00::1]/",
        "http://0x7f000001/",
        "http://2130706433/",
        "http://017700000001/",
        "http://0177.0.0.1/",
        "http://0x7f.0.0.1/",
        "http://127.1/",
        "http://127.0.1/",
        "http://127.000.000.001/",
        "http://1.2.3.4.5/",
        "http://256.1.1.1/",
        "http://example.123/",
        "http://example.0x10/",
        "http://0/",
        "http://0x/",
        "http://127.0.0.1/",
        "http://127.0.0.1./",
        "http://\uff11\uff12\uff17.0.0.1/",  # full-width digits map to 127.0.0.1
        "http://10.0.0.1/",
        "http://169.254.169.254/latest/meta-data/",
        "http://0.0.0.0/",
        "http://100.64.0.1/",
        "http://224.0.0.1/",
        "http://255.255.255.255/",
        "https://" + "a" * 9000 + ".com/",
        "",
    ],
)
def test_check_url_refuses(url, settings):
    settings.FETCH_ALLOW_HOSTS = []
    with pytest.raises(FetchRefused):
        check_url(url)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://example.com/a?b=c", "https://example.com/a?b=c"),
        ("HTTPS://Example.COM/Path", "https://example.com/Path"),
        ("https://example.com/#fragment", "https://example.com/"),
        ("http://example.com./x", "http://example.com/x"),
        ("http://example.com:80/", "http://example.com/"),
        ("http://example.com:8080/", "http://example.com:8080/"),
        ("http://Bücher.example/ü?q=ü", "http://xn--bcher-kva.example/%C3%BC?q=%C3%BC"),
        ("http://\uff25\uff38\uff21\uff2d\uff30\uff2c\uff25.com/", "http://example.com/"),
        ("http://under_score.example.com/", "http://under_score.example.com/"),
        ("http://93.184.215.14/", "http://93.184.215.14/"),
        ("http://[2606:4700::1111]:8443/x", "http://[2606:4700::1111]:8443/x"),
        ("http://0x10.example.com/", "http://0x10.example.com/"),  # a name, not a number
        ("http://example.com?@127.0.0.1", "http://example.com?@127.0.0.1"),  # a query
        ("http://example.com#@127.0.0.1", "http://example.com"),  # a fragment
    ],
)
def test_check_url_accepts_and_normalises(url, expected, settings):
    settings.FETCH_ALLOW_HOSTS = []
    result = check_url(url)
    assert isinstance(result, httpx.URL)
    assert str(result) == expected


def test_refusals_are_fetch_errors_and_refused():
    assert issubclass(FetchRefused, FetchError)
    assert issubclass(FetchRefused, Refused)
    assert issubclass(FetchError, JarvisError)
    assert FetchError("x").status is None
    assert FetchError("x", status=404).status == 404


def test_fetch_refuses_bad_schemes_before_any_lookup(dns):
    for url in ("ftp://example.com/", "file:///etc/passwd"):
        with pytest.raises(FetchRefused, match="only http and https"):
            fetch(url)
    assert dns.lookups == {}


def test_credentials_and_backslash_refused_even_for_an_allowed_host(web):
    with pytest.raises(FetchRefused, match="user name or password"):
        fetch(f"http://user:pass@{web.host_port}/")
    with pytest.raises(FetchRefused, match="backslash"):
        fetch(f"http://{web.host_port}\\@example.com/")
    assert web.requests == []


# --- Fetching


def test_fetches_a_good_html_page(web):
    web.page("/", "<h1>Hello</h1>")
    result = fetch(web.url("/"))
    assert isinstance(result, FetchResult)
    assert result.url == web.url("/")
    assert result.final_url == web.url("/")
    assert result.status == 200
    assert result.content_type == "text/html"
    assert result.charset == "utf-8"
    assert result.body == b"<h1>Hello</h1>"
    assert result.fetched_at.tzinfo is not None
    seen = web.requests[0]
    assert seen.headers["user-agent"].startswith("Jarvis/")
    assert seen.headers["host"] == web.host_port
    assert "cookie" not in seen.headers
    assert "authorization" not in seen.headers


def test_plain_text_and_caller_headers(web):
    web.route("/t", body=b"hi", content_type='text/plain; charset="ISO-8859-1"')
    result = fetch(web.url("/t"), headers={"Accept-Language": "de"})
    assert (result.content_type, result.charset) == ("text/plain", "iso-8859-1")
    assert web.requests[0].headers["accept-language"] == "de"


@pytest.mark.parametrize("name", ["Host", "cookie", "Authorization", "Proxy-Authorization"])
def test_caller_cannot_send_identity_or_host_headers(web, name):
    with pytest.raises(ValueError):
        fetch(web.url("/"), headers={name: "x"})
    assert web.requests == []


def test_image_content_type_refused(web):
    web.route("/cat", body=b"\x89PNG....", content_type="image/png")
    with pytest.raises(FetchError, match=r"not a web page \(got image/png\)"):
        fetch(web.url("/cat"))


def test_missing_content_type_is_not_a_web_page(web):
    web.route("/x", body=b"<h1>?</h1>", content_type=None)
    with pytest.raises(FetchError, match="application/octet-stream"):
        fetch(web.url("/x"))


def test_accept_chooses_the_types(web):
    web.route("/p.pdf", body=b"%PDF-1.7", content_type="application/pdf")
    assert fetch(web.url("/p.pdf"), accept=("application/pdf",)).body == b"%PDF-1.7"
    web.page("/", "<p>")
    with pytest.raises(FetchError, match=r"not a PDF \(got text/html\)"):
        fetch(web.url("/"), accept=("application/pdf",))


def test_http_404_is_an_error_with_status(web):
    with pytest.raises(FetchError) as caught:
        fetch(web.url("/missing"))
    assert caught.value.status == 404
    assert str(caught.value) == "HTTP 404 from 127.0.0.1"
    assert not isinstance(caught.value, FetchRefused)


def test_http_500_is_an_error_with_status(web):
    web.route("/boom", status=503, body=b"down")
    with pytest.raises(FetchError) as caught:
        fetch(web.url("/boom"))
    assert caught.value.status == 503


def test_unknown_host_is_an_error(dns):
    with pytest.raises(FetchError, match=r"could not find nowhere\.example"):
        fetch("http://nowhere.example/")


# --- Addresses a name leads to


@pytest.mark.parametrize(
    "answer",
    [
        ["10.0.0.1"],
        ["127.0.0.1"],
        ["169.254.169.254"],
        ["::1"],
        ["::ffff:127.0.0.1"],
        ["::ffff:7f00:1"],
        ["fd00::1"],
        ["64:ff9b::a00:1"],
        ["2002:c0a8:101::1"],
        ["93.184.215.14", "10.0.0.1"],  # any non-public answer refuses
        ["2606:4700::1111", "fe80::1"],
    ],
)
def test_a_name_leading_to_a_non_public_address_is_refused(dns, settings, answer):
    settings.FETCH_ALLOW_HOSTS = []
    dns.add("evil.example", answer)
    with pytest.raises(FetchRefused, match=r"evil\.example leads to a non-public address"):
        fetch("http://evil.example/")
    assert dns.lookups["evil.example"] == 1


def test_message_does_not_reveal_the_private_address(dns, settings):
    settings.FETCH_ALLOW_HOSTS = []
    dns.add("evil.example", ["10.1.2.3"])
    with pytest.raises(FetchRefused) as caught:
        fetch("http://evil.example/")
    assert "10.1.2.3" not in str(caught.value)


def test_pins_the_checked_address(web, dns, settings):
    """The name is looked up once per hop; the connection goes to that answer, even
    though a second lookup (DNS rebinding) would now say 10.9.9.9."""
    dns.add("pinned.example", ["127.0.0.1"], ["10.9.9.9"])
    settings.FETCH_ALLOW_HOSTS = [f"pinned.example:{web.port}"]
    web.page("/", "<p>pinned</p>")
    result = fetch(web.url("/", host="pinned.example"))
    assert result.body == b"<p>pinned</p>"
    assert result.final_url == f"http://pinned.example:{web.port}/"
    assert dns.lookups["pinned.example"] == 1
    assert web.requests[0].headers["host"] == f"pinned.example:{web.port}"
    assert web.requests[0].client == "127.0.0.1"


def test_pinned_request_is_addressed_to_the_name(settings):
    settings.FETCH_ALLOW_HOSTS = []
    target = fetch_module._parse("https://example.com/a?b=1")
    with httpx.Client() as client:
        request = fetch_module._pinned_request(
            client, target, ipaddress.ip_address("2606:4700::1111"), {"User-Agent": "x"}
        )
    assert str(request.url) == "https://[2606:4700::1111]/a?b=1"
    assert request.headers["host"] == "example.com"
    assert request.extensions["sni_hostname"] == "example.com"


def test_tries_the_next_checked_address_when_one_refuses_connections(web, dns, settings):
    # 127.0.0.2 is loopback too, but nothing listens there.
    dns.add("multi.example", ["127.0.0.2", "127.0.0.1"])
    settings.FETCH_ALLOW_HOSTS = [f"multi.example:{web.port}"]
    web.page("/", "ok")
    assert fetch(web.url("/", host="multi.example")).body == b"ok"
    assert dns.lookups["multi.example"] == 1


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.mark.skipif(not _ipv6_loopback(), reason="no IPv6 loopback here")
def test_ipv6_literal_and_name_pinned_to_ipv6(settings, dns):
    with FakeWeb(host="::1") as server:
        server.page("/", "v6")
        settings.FETCH_ALLOW_HOSTS = [server.host_port, f"six.example:{server.port}"]
        assert fetch(server.url("/")).body == b"v6"
        assert server.requests[0].headers["host"] == f"[::1]:{server.port}"
        dns.add("six.example", ["::1"])
        assert fetch(server.url("/", host="six.example")).body == b"v6"
        assert server.requests[1].headers["host"] == f"six.example:{server.port}"


def test_https_is_pinned_and_verified_against_the_name(settings, dns, monkeypatch):
    server_tls, client_tls = make_tls("secure.example")
    monkeypatch.setattr(fetch_module, "_ssl_context", lambda: client_tls)
    dns.add("secure.example", ["127.0.0.1"], ["10.9.9.9"])
    dns.add("other.example", ["127.0.0.1"])
    with FakeWeb(tls=server_tls) as server:
        server.page("/", "secret-free")
        settings.FETCH_ALLOW_HOSTS = [f"secure.example:{server.port}", "other.example"]
        result = fetch(server.url("/", host="secure.example"))
        assert result.body == b"secret-free"
        assert server.requests[0].headers["host"] == f"secure.example:{server.port}"
        assert dns.lookups["secure.example"] == 1
        # Same address, but the certificate does not name other.example.
        with pytest.raises(
            FetchError,
            match=r"could not connect to other\.example \(its certificate could not be verified\)",
        ):
            fetch(server.url("/", host="other.example"))
        assert len(server.requests) == 1


# --- Redirects


def test_redirects_are_followed_with_relative_locations(web, dns, settings):
    dns.add("hop.example", ["127.0.0.1"])
    settings.FETCH_ALLOW_HOSTS = [web.host_port, f"hop.example:{web.port}"]
    web.redirect("/start", "/a/b")  # absolute path
    web.redirect("/a/b", "c?x=1", status=301)  # relative to /a/
    web.redirect("/a/c", f"//hop.example:{web.port}/d", status=307)  # scheme-relative
    web.redirect("/d", web.url("/end"), status=308)  # absolute URL
    web.page("/end", "done")
    result = fetch(web.url("/start"))
    assert result.body == b"done"
    assert result.url == web.url("/start")
    assert result.final_url == web.url("/end")
    assert web.paths() == ["/start", "/a/b", "/a/c?x=1", "/d", "/end"]
    assert dns.lookups["hop.example"] == 1
    assert web.requests[3].headers["host"] == f"hop.example:{web.port}"


def test_redirect_to_a_private_address_is_refused(web, dns):
    dns.add("evil.example", ["10.0.0.1"])
    web.redirect("/go", "http://evil.example/admin")
    with pytest.raises(FetchRefused, match=r"evil\.example leads to a non-public address"):
        fetch(web.url("/go"))
    assert dns.lookups["evil.example"] == 1


@pytest.mark.parametrize(
    "location",
    [
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]/",
        "http://2130706433/",
        "http://user:pw@example.com/",
        "ftp://example.com/",
        "file:///etc/passwd",
        "http://127.0.0.1\\@example.com/",
        "/next page",  # unencoded space
    ],
)
def test_redirect_hops_are_rechecked(web, location):
    web.redirect("/go", location)
    web.page("/next", "must not be reached")
    with pytest.raises(FetchRefused):
        fetch(web.url("/go"))
    assert web.paths() == ["/go"]


def test_redirect_to_another_port_of_an_allowed_host_is_refused(web):
    web.redirect("/go", f"http://127.0.0.1:{web.port + 1 if web.port < 65535 else 1}/")
    with pytest.raises(FetchRefused, match="not a public address"):
        fetch(web.url("/go"))


def _chain(web: FakeWeb, hops: int) -> str:
    for i in range(hops):
        web.redirect(f"/r{i}", f"/r{i + 1}")
    web.page(f"/r{hops}", "end")
    return web.url("/r0")


def test_five_redirects_are_followed(web):
    assert fetch(_chain(web, 5)).body == b"end"


def test_the_sixth_redirect_is_refused(web):
    with pytest.raises(FetchError, match="too many redirects"):
        fetch(_chain(web, 6))
    assert len(web.requests) == 6  # the sixth Location is never requested


def test_max_redirects_zero(web):
    with pytest.raises(FetchError, match="too many redirects"):
        fetch(_chain(web, 1), max_redirects=0)


def test_redirect_without_location_is_an_http_error(web):
    web.route("/odd", status=302, content_type=None)
    with pytest.raises(FetchError) as caught:
        fetch(web.url("/odd"))
    assert caught.value.status == 302


def test_cookies_are_neither_kept_nor_sent(web):
    web.redirect("/login", "/home", headers=[("Set-Cookie", "session=abc; Path=/")])
    web.page("/home", "home")
    fetch(web.url("/login"))
    fetch(web.url("/home"))
    assert all("cookie" not in r.headers for r in web.requests)


# --- The allow-list


def test_allow_list_exempts_only_the_listed_port(web, settings):
    web.page("/", "ok")
    settings.FETCH_ALLOW_HOSTS = [f"127.0.0.1:{web.port + 1 if web.port < 65535 else 1}"]
    with pytest.raises(FetchRefused, match="not a public address"):
        fetch(web.url("/"))
    settings.FETCH_ALLOW_HOSTS = ["127.0.0.1"]  # a bare host: any port
    assert fetch(web.url("/")).body == b"ok"
    settings.FETCH_ALLOW_HOSTS = [f"127.0.0.1:{web.port}"]
    assert fetch(web.url("/")).body == b"ok"
    settings.FETCH_ALLOW_HOSTS = []
    with pytest.raises(FetchRefused):
        fetch(web.url("/"))
    assert len(web.requests) == 2


def test_allow_list_exempts_only_the_listed_name(web, dns, settings):
    dns.add("mirror.lan", ["127.0.0.1"])
    dns.add("other.lan", ["127.0.0.1"])
    settings.FETCH_ALLOW_HOSTS = [f"Mirror.LAN:{web.port}"]
    web.page("/", "ok")
    assert fetch(web.url("/", host="mirror.lan")).body == b"ok"
    with pytest.raises(FetchRefused):
        fetch(web.url("/", host="other.lan"))
    with pytest.raises(FetchRefused):  # the address itself is not exempt by the name
        fetch(web.url("/"))


def test_arxiv_hosts_configured_by_the_admin_are_exempt(web, settings, dns):
    web.route("/api/query", body=b"<feed/>", content_type="application/atom+xml")
    web.route("/pdf/1", body=b"%PDF-", content_type="application/pdf")
    dns.add("arxiv.lan", ["127.0.0.1"])
    settings.FETCH_ALLOW_HOSTS = []
    settings.ARXIV_API_URL = f"http://127.0.0.1:{web.port}/api"
    settings.ARXIV_PDF_URL = f"http://arxiv.lan:{web.port}/pdf"
    feed = fetch(web.url("/api/query"), accept=("application/atom+xml",))
    assert feed.body == b"<feed/>"
    pdf = fetch(web.url("/pdf/1", host="arxiv.lan"), accept=("application/pdf",))
    assert pdf.body == b"%PDF-"
    with pytest.raises(FetchRefused):  # syntax rules still apply to them
        fetch(f"http://x@arxiv.lan:{web.port}/pdf/1")
    settings.ARXIV_API_URL = "https://export.arxiv.org/api"
    with pytest.raises(FetchRefused):
        fetch(web.url("/api/query"), accept=("application/atom+xml",))


# --- Time and size caps


def test_a_server_that_hangs_times_out(web):
    web.route("/slow", body=b"late", delay=10)
    with pytest.raises(FetchError, match=r"timed out after 0.3 s"):
        fetch(web.url("/slow"), timeout=0.3)


def test_a_slow_drip_body_hits_the_overall_deadline(web):
    web.route("/drip", body=drip(b"x", every=0.05))
    with pytest.raises(FetchError, match="timed out after"):
        fetch(web.url("/drip"), timeout=0.2)
    # Each drip arrives well inside the per-read timeout: only the overall
    # deadline (DEADLINE_FACTOR times the timeout) stops it, long before 2,000 drips.
    assert 0 < web.requests[0].sent < 100


def test_default_timeout_comes_from_settings(web, settings):
    settings.FETCH_TIMEOUT_SECONDS = 0.25
    web.route("/slow", delay=10)
    with pytest.raises(FetchError, match=r"timed out after 0.25 s"):
        fetch(web.url("/slow"))


def test_a_2gb_stream_is_cut_off_early_with_little_memory(web, settings):
    settings.FETCH_MAX_MB = 2
    web.route("/huge", body=endless(total=2 * GB))  # no Content-Length: read until too big
    tracemalloc.start()
    try:
        with pytest.raises(FetchError, match="larger than 2 MB"):
            fetch(web.url("/huge"))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 * 1024 * 1024
    assert web.requests[0].sent < 64 * 1024 * 1024  # the server was not drained


def test_a_2gb_content_length_is_refused_before_reading(web):
    web.route("/huge", body=endless(total=2 * GB), headers=[("Content-Length", str(2 * GB))])
    with pytest.raises(FetchError, match="larger than 1 MB"):
        fetch(web.url("/huge"), max_bytes=1024 * 1024)
    assert web.requests[0].sent < 16 * 1024 * 1024


def test_a_body_exactly_at_the_cap_is_fine(web):
    web.route("/k", body=b"x" * 1000)
    assert len(fetch(web.url("/k"), max_bytes=1000).body) == 1000
    with pytest.raises(FetchError, match="larger than"):
        fetch(web.url("/k"), max_bytes=999)


def test_gzip_is_decoded_and_counted_decoded(web):
    import gzip

    web.route("/z", body=gzip.compress(b"a" * 100_000), headers=[("Content-Encoding", "gzip")])
    assert fetch(web.url("/z")).body == b"a" * 100_000
    with pytest.raises(FetchError, match="larger than"):
        fetch(web.url("/z"), max_bytes=50_000)
