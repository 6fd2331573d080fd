"""The only way Jarvis fetches a URL that a person (or a model) gave it: an SSRF guard.

A URL typed into a form, pasted into a chat or proposed by a model can point
anywhere, including at this machine, the router or a cloud metadata service.
`fetch()` therefore enforces, on the URL asked for and on every redirect hop:

1. Syntax (`check_url`, no DNS): only `http`/`https` written as `scheme://host`;
   no credentials (`user:pass@`, any `@` in the authority); no backslash, control
   character or whitespace anywhere; a host that is non-empty and IDNA-encodable
   (labels of letters, digits, `-`, `_`); a port 1-65535 if given; no IPv6 zone id.
   Numeric hosts: a host whose last label is a number (decimal, or `0x` hex) is an
   IPv4 address to a URL parser or an OS resolver, so it must be a canonical
   dotted quad (`a.b.c.d`, decimal, no leading zeros); shorthand and other bases
   (`127.1`, `2130706433`, `0x7f000001`, `017700000001`, `0177.0.0.1`) are refused
   outright rather than reinterpreted. An IP-literal host that is not public is
   refused here already (no DNS needed), as in `http://[::1]/`.
2. Addresses: the host is resolved (`socket.getaddrinfo`, IPv4 and IPv6) and the
   fetch is refused if ANY answer is not public (`is_public_address`: loopback,
   private, link-local, CGNAT, multicast, unspecified, reserved, documentation,
   broadcast, and IPv6 forms that embed such an IPv4 address).
3. Exemption: hosts in `settings.FETCH_ALLOW_HOSTS` ("host" = any port, or
   "host:port") and the hosts of `settings.ARXIV_API_URL`/`ARXIV_PDF_URL`/
   `BIORXIV_API_URL` (the
   admin configured them; "host:port" when the URL names a port) skip rule 2 and
   the literal-address part of rule 1 only. Settings are read at call time.
4. Pinning: the request goes to the address that was checked (the URL's host is
   replaced by the IP; `Host` header and TLS SNI/certificate check use the real
   name), so a second DNS answer (rebinding) cannot redirect the connection. Each
   hop gets a fresh connection pool: a TLS connection verified for one name is
   never reused for another name on the same address.
5. Redirects are followed by hand, at most `max_redirects` (default 5), each
   `Location` resolved against the current URL and put through rules 1-4 again.
6. Size: `Content-Length` over the cap is refused before reading; the body is
   streamed and abandoned as soon as it passes `max_bytes` (default
   `settings.FETCH_MAX_MB` MiB).
7. Time: connect/read/write timeouts of `timeout` seconds (default
   `settings.FETCH_TIMEOUT_SECONDS`) for each network operation, and an overall
   deadline of DEADLINE_FACTOR x `timeout` for the whole fetch (all hops and the
   body), so a server that drips a byte a second is cut off too. DNS lookups are
   bounded by the system resolver's own timeout, then count against the deadline.
8. The final response must be 2xx and of a media type in `accept`.
9. No cookies are kept or sent, no credentials, no proxies or netrc from the
   environment; `User-Agent` is `settings.FETCH_USER_AGENT`.

Errors are `FetchError` (message safe to show, `.status` set for HTTP errors) or
its subclass `FetchRefused` (the URL or an address it leads to is not allowed).
Details that could help probe the local network (resolved addresses) are logged,
not put in messages.
"""

from __future__ import annotations

import functools
import ipaddress
import logging
import re
import socket
import ssl
import time
import unicodedata
from dataclasses import dataclass
from datetime import datetime
from email.message import Message
from http.cookiejar import Cookie, DefaultCookiePolicy
from urllib.parse import urljoin, urlsplit

import httpx
import idna
from django.conf import settings
from django.utils import timezone

from apps.core.addresses import DEFAULT_PORTS, IPAddress, is_public_address
from apps.core.errors import JarvisError, Refused

logger = logging.getLogger(__name__)

MIB = 1024 * 1024
MAX_URL_LENGTH = 8192
# Reads are bounded one by one by `timeout`; the whole fetch by this many times it,
# which leaves room for a large PDF on an ordinary line but not for a slow drip.
DEADLINE_FACTOR = 3
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
DEFAULT_ACCEPT = ("text/html", "application/xhtml+xml", "text/plain")
# Caller headers that would smuggle identity or defeat pinning.
FORBIDDEN_HEADERS = frozenset(
    {"host", "cookie", "authorization", "proxy-authorization", "connection", "transfer-encoding"}
)

_LABEL = re.compile(r"^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$")
_NUMBER_LABEL = re.compile(r"^(?:[0-9]+|0x[0-9a-f]*)$")
_CANONICAL_OCTET = re.compile(r"^(?:0|[1-9][0-9]{0,2})$")


class FetchError(JarvisError):
    """A fetch that failed. The message is safe to show; `.status` is the HTTP
    status when the server answered with an error, else None."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class FetchRefused(FetchError, Refused):
    """The URL, or an address it leads to, is not allowed."""


@dataclass
class FetchResult:
    url: str  # as requested
    final_url: str  # after redirects
    status: int
    content_type: str  # lower-case mime without parameters, e.g. "text/html"
    charset: str | None
    body: bytes
    fetched_at: datetime  # aware, timezone.now()


# --- URL syntax


@dataclass(frozen=True)
class _Target:
    url: httpx.URL  # normalised (lower-case scheme, ASCII host)
    scheme: str
    host: str  # ASCII, no brackets, no trailing dot
    port: int  # explicit or the scheme's default
    literal: IPAddress | None  # the host when it is an IP address


def _refuse(reason: str) -> FetchRefused:
    return FetchRefused(f"refused: {reason}")


def _check_characters(text: str) -> None:
    # urlsplit silently drops tabs and newlines, and parsers disagree about
    # backslashes, so both are refused before any parsing happens.
    if "\\" in text:
        raise _refuse("the address contains a backslash")
    for char in text:
        if char.isspace() or unicodedata.category(char) in ("Cc", "Cf", "Zs", "Zl", "Zp"):
            raise _refuse("the address contains spaces or control characters")


def _split_authority(netloc: str) -> tuple[str, str | None]:
    """(host, port text) from an authority without userinfo; brackets kept on IPv6."""
    if netloc.startswith("["):
        end = netloc.find("]")
        if end < 0:
            raise _refuse("unclosed [ in the host")
        host, rest = netloc[: end + 1], netloc[end + 1 :]
        if rest and not rest.startswith(":"):
            raise _refuse("unexpected text after the IPv6 address")
        return host, (rest[1:] if rest else None)
    if netloc.count(":") > 1:
        raise _refuse("an IPv6 address must be written in [brackets]")
    host, colon, port = netloc.partition(":")
    return host, (port if colon else None)


def _parse_port(text: str | None, scheme: str) -> int:
    if text is None:
        return DEFAULT_PORTS[scheme]
    if not text.isascii() or not text.isdigit() or not 0 < int(text) < 65536:
        raise _refuse("the port is not a number from 1 to 65535")
    return int(text)


def _ascii_host(host: str) -> str:
    """The host as IDNA ASCII, lower case, one trailing dot dropped; refuses bad names."""
    host = host.lower().removesuffix(".")
    if not host:
        raise _refuse("the address has no host")
    if not host.isascii():
        try:
            host = idna.encode(host, uts46=True).decode("ascii")
        except (idna.IDNAError, UnicodeError):
            raise _refuse("the host is not a valid international name") from None
    labels = host.split(".")
    if len(host) > 253 or not all(_LABEL.match(label) for label in labels):
        raise _refuse("the host is not a valid name")
    for label in labels:
        if label.startswith("xn--"):
            try:
                idna.decode(label)
            except (idna.IDNAError, UnicodeError):
                raise _refuse("the host is not a valid international name") from None
    return host


def _numeric_host(host: str) -> ipaddress.IPv4Address | None:
    """The IPv4 address for a numeric host, None for a name.

    A URL parser (WHATWG) or inet_aton treats a host whose last label is a number
    as IPv4 and accepts shorthand, octal and hex forms; rather than reinterpret
    those (and risk disagreeing with a resolver), only canonical dotted quads pass.
    """
    labels = host.split(".")
    if not _NUMBER_LABEL.match(labels[-1]):
        return None
    if len(labels) != 4 or not all(_CANONICAL_OCTET.match(x) and int(x) < 256 for x in labels):
        raise _refuse("numeric hosts must be written as four decimal numbers (a.b.c.d)")
    return ipaddress.IPv4Address(host)


def _parse_host(raw: str) -> tuple[str, IPAddress | None]:
    if raw.startswith("["):
        inner = raw[1:-1]
        if "%" in inner:
            raise _refuse("IPv6 zone ids are not allowed")
        try:
            ip6 = ipaddress.IPv6Address(inner)
        except ValueError:
            raise _refuse("the host is not a valid IPv6 address") from None
        return ip6.compressed, ip6
    host = _ascii_host(raw)
    return host, _numeric_host(host)


def _parse(url: str) -> _Target:
    if not isinstance(url, str) or not url:
        raise _refuse("no address given")
    if len(url) > MAX_URL_LENGTH:
        raise _refuse("the address is too long")
    _check_characters(url)
    try:
        parts = urlsplit(url)
    except ValueError:
        raise _refuse("the address could not be understood") from None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS:
        raise _refuse("only http and https addresses can be fetched")
    if not url[len(parts.scheme) + 1 :].startswith("//"):
        raise _refuse("the address must start with http:// or https://")
    if "@" in parts.netloc:
        raise _refuse("addresses with a user name or password are not allowed")
    raw_host, port_text = _split_authority(parts.netloc)
    port = _parse_port(port_text, scheme)
    host, literal = _parse_host(raw_host)
    if literal is not None and not is_public_address(literal) and not _exempt(host, port):
        logger.info("fetch refused: literal address %s is not public", literal)
        raise _refuse(f"{_display(host)} is not a public address")
    # Rebuild the URL around the host as checked, so httpx cannot read a different
    # destination out of the original text; it still encodes path and query.
    rest = url[len(parts.scheme) + 3 + len(parts.netloc) :]
    authority = _display(host) if port_text is None else f"{_display(host)}:{port}"
    try:
        rebuilt = httpx.URL(f"{scheme}://{authority}{rest}").copy_with(fragment=None)
    except (httpx.InvalidURL, ValueError):
        raise _refuse("the address could not be understood") from None
    if rebuilt.raw_host.decode("ascii") != host or (rebuilt.port or DEFAULT_PORTS[scheme]) != port:
        raise _refuse("the address is ambiguous")
    return _Target(url=rebuilt, scheme=scheme, host=host, port=port, literal=literal)


def check_url(url: str) -> httpx.URL:
    """The URL, normalised, if it passes the syntax rules (no DNS lookup);
    otherwise FetchRefused. An IP-literal host must also be public (or exempt)."""
    return _parse(url).url


def _display(host: str) -> str:
    return f"[{host}]" if ":" in host else host


# --- The admin's exemptions


def _allow_entry(entry: str) -> tuple[str, int | None] | None:
    """("host", port or None for any port) from "host", "host:port", "[v6]:port" or "v6"."""
    entry = entry.strip().lower()
    if not entry:
        return None
    if entry.startswith("["):
        host, _, rest = entry[1:].partition("]")
        port = rest.removeprefix(":")
    elif entry.count(":") == 1:
        host, _, port = entry.partition(":")
    else:
        host, port = entry, ""
    if port and not port.isdigit():
        return None
    try:
        host = ipaddress.ip_address(host).compressed
    except ValueError:
        host = host.removesuffix(".")
        if not host.isascii():
            try:
                host = idna.encode(host, uts46=True).decode("ascii")
            except (idna.IDNAError, UnicodeError):
                return None
    return host, (int(port) if port else None)


def _allowed_entries() -> list[tuple[str, int | None]]:
    entries = [_allow_entry(str(e)) for e in settings.FETCH_ALLOW_HOSTS]
    configured_apis = (settings.ARXIV_API_URL, settings.ARXIV_PDF_URL, settings.BIORXIV_API_URL)
    for configured in configured_apis:
        try:
            parts = urlsplit(str(configured))
            if parts.hostname:
                entries.append(_allow_entry(f"[{parts.hostname}]:{parts.port or ''}"))
        except ValueError:
            continue
    return [e for e in entries if e is not None]


def _exempt(host: str, port: int) -> bool:
    """Whether the admin exempted host:port from the public-address rule."""
    return any(h == host and p in (None, port) for h, p in _allowed_entries())


# --- Resolving and pinning


def _resolve(target: _Target) -> list[IPAddress]:
    """Every address the host resolves to (both families), in the resolver's order."""
    if target.literal is not None:
        return [target.literal]
    if target.host == "invalid" or target.host.endswith(".invalid"):
        # RFC 6761 §6.4: such a name never resolves; say so without waiting on a
        # resolver that an offline machine may not reach for seconds.
        raise FetchError(f"could not find {target.host}")
    try:
        answers = socket.getaddrinfo(target.host, target.port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError, OSError):
        raise FetchError(f"could not find {target.host}") from None
    addresses: list[IPAddress] = []
    for family, _type, _proto, _name, sockaddr in answers:
        if family not in (socket.AF_INET, socket.AF_INET6):
            continue
        ip = ipaddress.ip_address(str(sockaddr[0]).split("%")[0])
        if ip not in addresses:
            addresses.append(ip)
    if not addresses:
        raise FetchError(f"could not find {target.host}")
    return addresses


def _checked_addresses(target: _Target) -> list[IPAddress]:
    addresses = _resolve(target)
    if _exempt(target.host, target.port):
        return addresses
    bad = [ip for ip in addresses if not is_public_address(ip)]
    if bad:
        logger.info("fetch refused: %s resolves to non-public %s", target.host, bad)
        raise _refuse(f"{_display(target.host)} leads to a non-public address")
    return addresses


def _host_header(target: _Target) -> str:
    host = _display(target.host)
    return host if target.port == DEFAULT_PORTS[target.scheme] else f"{host}:{target.port}"


def _pinned_request(
    client: httpx.Client, target: _Target, ip: IPAddress, headers: dict[str, str]
) -> httpx.Request:
    """A GET sent to `ip` but addressed (Host, SNI, certificate name) to the real host."""
    extensions = {}
    if target.scheme == "https" and target.literal is None:
        extensions["sni_hostname"] = target.host
    return client.build_request(
        "GET",
        target.url.copy_with(host=ip.compressed),
        headers={**headers, "Host": _host_header(target)},
        extensions=extensions,
    )


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """Certificate checks against certifi's roots (or SSL_CERT_FILE/SSL_CERT_DIR,
    for a household CA). Built once: loading the bundle costs a few milliseconds."""
    return httpx.create_ssl_context(trust_env=True)


class _NoCookies(DefaultCookiePolicy):
    """A fetch carries no identity: cookies a server sets are neither kept nor sent."""

    def set_ok(self, cookie: Cookie, request: object) -> bool:
        return False

    def return_ok(self, cookie: Cookie, request: object) -> bool:
        return False


def _client(seconds: float) -> httpx.Client:
    # trust_env=False: no proxy (it would do its own DNS) and no netrc credentials.
    client = httpx.Client(
        follow_redirects=False,
        trust_env=False,
        verify=_ssl_context(),
        timeout=httpx.Timeout(seconds),
        limits=httpx.Limits(max_connections=1, max_keepalive_connections=0),
    )
    client.cookies.jar.set_policy(_NoCookies())
    return client


# --- The fetch


@dataclass
class _Budget:
    seconds: float  # per network operation
    deadline: float  # time.monotonic() by which the whole fetch must be done

    def remaining(self) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise self.expired()
        return min(self.seconds, left)

    def expired(self) -> FetchError:
        return FetchError(f"timed out after {_number(self.seconds * DEADLINE_FACTOR)} s")

    def timed_out(self) -> FetchError:
        """The error for an httpx timeout: one operation's, or the overall deadline's."""
        if time.monotonic() >= self.deadline - 0.05:
            return self.expired()
        return FetchError(f"timed out after {_number(self.seconds)} s")


def _number(value: float) -> str:
    # 20.0 -> "20", 0.25 -> "0.25"
    return f"{value:g}"


def _request_headers(accept: tuple[str, ...], headers: dict[str, str] | None) -> dict[str, str]:
    base = {
        "User-Agent": settings.FETCH_USER_AGENT,
        "Accept": ", ".join(accept) or "*/*",
        # Only codings httpx always decodes; the size cap counts decoded bytes.
        "Accept-Encoding": "gzip, deflate",
    }
    for name, value in (headers or {}).items():
        if name.lower() in FORBIDDEN_HEADERS:
            raise ValueError(f"fetch() does not send a caller's {name} header")
        base[name] = value
    return base


def _open(
    target: _Target, headers: dict[str, str], budget: _Budget
) -> tuple[httpx.Client, httpx.Response]:
    """The response (headers read, body not) from the first checked address that
    accepts a connection, and its client; the caller closes both."""
    addresses = _checked_addresses(target)
    failure: Exception | None = None
    for ip in addresses:
        seconds = budget.remaining()
        # One client per attempt: its pool never holds a connection verified for another name.
        client = _client(seconds)
        try:
            response = client.send(_pinned_request(client, target, ip, headers), stream=True)
        except httpx.ConnectError as exc:  # refused, unreachable, TLS failure: try the next
            client.close()
            failure = exc
            logger.info("fetch: %s at %s failed: %s", target.host, ip, exc)
            continue
        except httpx.TimeoutException:
            client.close()
            raise budget.timed_out() from None
        except httpx.HTTPError as exc:
            client.close()
            logger.info("fetch: %s at %s failed: %s", target.host, ip, exc)
            raise FetchError(f"the connection to {_display(target.host)} failed") from None
        return client, response
    reason = " (its certificate could not be verified)" if _certificate_failed(failure) else ""
    raise FetchError(f"could not connect to {_display(target.host)}{reason}") from failure


def _certificate_failed(exc: BaseException | None) -> bool:
    # httpx wraps httpcore's error, which wraps the ssl module's.
    while exc is not None:
        if isinstance(exc, ssl.SSLCertVerificationError):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def _next_url(response: httpx.Response, target: _Target) -> str | None:
    """The absolute URL a redirect points to, or None when it is not a redirect."""
    if response.status_code not in REDIRECT_STATUSES:
        return None
    location = response.headers.get("location")
    if not location:
        return None
    _check_characters(location)  # before urljoin, which would drop tabs and newlines
    return urljoin(str(target.url), location)


def _media_type(header: str | None) -> tuple[str, str | None]:
    # No Content-Type means "unknown bytes" (RFC 9110 8.3), never a web page.
    message = Message()
    message["content-type"] = header or "application/octet-stream"
    charset = message.get_param("charset")
    charset = charset.strip().lower() if isinstance(charset, str) and charset.strip() else None
    return message.get_content_type().lower(), charset


def _accepted(mime: str, accept: tuple[str, ...]) -> bool:
    major = mime.split("/")[0]
    return any(a.lower() in (mime, f"{major}/*", "*/*") for a in accept)


def _wrong_type(mime: str, accept: tuple[str, ...]) -> FetchError:
    if "text/html" in accept:
        return FetchError(f"not a web page (got {mime})")
    if tuple(accept) == ("application/pdf",):
        return FetchError(f"not a PDF (got {mime})")
    return FetchError(f"unexpected content (got {mime}; wanted {', '.join(accept)})")


def _too_large(max_bytes: int) -> FetchError:
    return FetchError(f"larger than {_number(round(max_bytes / MIB, 2))} MB")


def _read_body(response: httpx.Response, max_bytes: int, budget: _Budget) -> bytes:
    declared = response.headers.get("content-length", "")
    if declared.strip().isdigit() and int(declared) > max_bytes:
        raise _too_large(max_bytes)
    body = bytearray()
    try:
        for chunk in response.iter_bytes():
            body += chunk
            if len(body) > max_bytes:
                raise _too_large(max_bytes)
            if time.monotonic() > budget.deadline:
                raise budget.expired()
    except httpx.TimeoutException:
        raise budget.timed_out() from None
    except httpx.DecodingError:
        raise FetchError("the page could not be decoded") from None
    except httpx.HTTPError as exc:
        logger.info("fetch: reading from %s failed: %s", response.url, exc)
        raise FetchError("the connection broke while reading the page") from None
    return bytes(body)


def _finish(
    url: str,
    target: _Target,
    response: httpx.Response,
    accept: tuple[str, ...],
    max_bytes: int,
    budget: _Budget,
) -> FetchResult:
    status = response.status_code
    if not 200 <= status < 300:
        raise FetchError(f"HTTP {status} from {_display(target.host)}", status=status)
    mime, charset = _media_type(response.headers.get("content-type"))
    if not _accepted(mime, accept):
        raise _wrong_type(mime, accept)
    body = _read_body(response, max_bytes, budget)
    return FetchResult(
        url=url,
        final_url=str(target.url),
        status=status,
        content_type=mime,
        charset=charset,
        body=body,
        fetched_at=timezone.now(),
    )


def fetch(
    url: str,
    *,
    accept: tuple[str, ...] = DEFAULT_ACCEPT,
    max_bytes: int | None = None,
    timeout: float | None = None,
    max_redirects: int = 5,
    headers: dict[str, str] | None = None,
) -> FetchResult:
    """GET `url` under the rules in this module's docstring. Raises FetchRefused
    when the URL or an address it leads to is not allowed, FetchError otherwise
    (timeouts, size, type, HTTP errors); ValueError for a forbidden caller header."""
    seconds = float(timeout if timeout is not None else settings.FETCH_TIMEOUT_SECONDS)
    limit = max_bytes if max_bytes is not None else settings.FETCH_MAX_MB * MIB
    budget = _Budget(seconds, time.monotonic() + seconds * DEADLINE_FACTOR)
    request_headers = _request_headers(accept, headers)
    target = _parse(url)
    for hop in range(max_redirects + 1):
        client, response = _open(target, request_headers, budget)
        try:
            location = _next_url(response, target)
            if location is None:
                return _finish(url, target, response, accept, limit, budget)
        finally:
            response.close()
            client.close()
        if hop == max_redirects:
            break
        target = _parse(location)
    raise FetchError(f"too many redirects (more than {max_redirects})")
