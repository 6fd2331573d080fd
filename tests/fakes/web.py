"""A small scriptable web server and a fake resolver, for tests that fetch URLs
without touching the internet.

    with FakeWeb() as web:
        web.page("/", "<h1>hi</h1>")
        web.redirect("/old", "/")
        web.route("/huge", body=endless(total=2 * 1024**3), content_type="text/html")
        web.route("/slow", delay=5)
        settings.FETCH_ALLOW_HOSTS = [web.host_port]
        fetch(web.url("/old"))
        web.requests[-1].headers["host"]

The server is a real `http.server` on 127.0.0.1 and a free port, one thread per
connection, HTTP/1.0 (a body without Content-Length ends when the connection
closes), optionally TLS (`make_tls`). A body may be bytes or a callable returning
an iterable of chunks, so a slow drip or a 2 GB stream is generated, never held.

`FakeDNS` answers getaddrinfo for the names it was given (a list of answers is
used one per lookup, the last one repeating) and refuses every other name that
is not an IP literal, so no test can reach a real host by accident.
"""

from __future__ import annotations

import contextlib
import datetime
import ipaddress
import socket
import ssl
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.fakes.serving import ServedFake

Body = bytes | Callable[[], Iterable[bytes]]


@dataclass
class Reply:
    status: int = 200
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: Body = b""
    delay: float = 0.0  # seconds before the status line: a server that hangs


@dataclass
class SeenRequest:
    path: str
    headers: dict[str, str]  # lower-case names
    client: str  # the peer address the server saw
    sent: int = 0  # body bytes the server managed to write


def drip(chunk: bytes = b"x", *, every: float = 0.1, count: int = 10_000) -> Callable[[], Iterator]:
    """A body that sends `chunk` every `every` seconds: never a read timeout, never done."""

    def body() -> Iterator[bytes]:
        for _ in range(count):
            yield chunk
            time.sleep(every)

    return body


def endless(*, total: int, chunk_size: int = 64 * 1024) -> Callable[[], Iterator]:
    """A body of `total` zero bytes, generated chunk by chunk (one chunk object reused)."""

    def body() -> Iterator[bytes]:
        chunk = b"\0" * chunk_size
        for _ in range(total // chunk_size):
            yield chunk

    return body


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format, *args) -> None:
        pass  # keep test output clean

    def do_GET(self) -> None:
        web = self.server.web
        seen = SeenRequest(
            path=self.path,
            headers={k.lower(): v for k, v in self.headers.items()},
            client=self.client_address[0],
        )
        web.requests.append(seen)
        reply = web.reply_for(self.path)
        if reply.delay and web.stopping.wait(reply.delay):
            return
        # OSError (broken pipe, reset, TLS): the client gave up, as several tests intend.
        with contextlib.suppress(OSError):
            self._send(reply, seen)

    def _send(self, reply: Reply, seen: SeenRequest) -> None:
        self.send_response(reply.status)
        names = {name.lower() for name, _ in reply.headers}
        for name, value in reply.headers:
            self.send_header(name, value)
        if isinstance(reply.body, bytes) and "content-length" not in names:
            self.send_header("Content-Length", str(len(reply.body)))
        self.send_header("Connection", "close")
        self.end_headers()
        chunks = [reply.body] if isinstance(reply.body, bytes) else reply.body()
        for chunk in chunks:
            if self.server.web.stopping.is_set():
                return
            self.wfile.write(chunk)
            seen.sent += len(chunk)
        self.wfile.flush()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, address, web: FakeWeb, address_family: int) -> None:
        self.address_family = address_family
        self.web = web
        super().__init__(address, _Handler)

    def handle_error(self, request, client_address) -> None:
        pass  # failed TLS handshakes are expected in the certificate tests


class FakeWeb(ServedFake):
    """A local web server with scripted routes; use as a context manager."""

    def __init__(self, *, host: str = "127.0.0.1", tls: ssl.SSLContext | None = None) -> None:
        self.host = host
        self.tls = tls
        self.routes: dict[str, Reply | Callable[[str], Reply]] = {}
        self.requests: list[SeenRequest] = []
        self.stopping = threading.Event()

    # --- scripting

    def route(
        self,
        path: str,
        *,
        status: int = 200,
        body: Body = b"",
        content_type: str | None = "text/html; charset=utf-8",
        headers: list[tuple[str, str]] | None = None,
        delay: float = 0.0,
    ) -> None:
        all_headers = [("Content-Type", content_type)] if content_type else []
        self.routes[path] = Reply(status, [*all_headers, *(headers or [])], body, delay)

    def page(self, path: str, html: str, **kwargs) -> None:
        self.route(path, body=html.encode("utf-8"), **kwargs)

    def redirect(self, path: str, location: str, *, status: int = 302, **kwargs) -> None:
        headers = [("Location", location), *kwargs.pop("headers", [])]
        self.route(path, status=status, headers=headers, content_type=None, **kwargs)

    def reply_for(self, path: str) -> Reply:
        reply = self.routes.get(path) or self.routes.get(path.split("?")[0])
        if reply is None:
            return Reply(404, [("Content-Type", "text/plain")], b"not found")
        return reply(path) if callable(reply) else reply

    # --- addresses

    @property
    def port(self) -> int:
        assert self._server is not None, "start the server first"
        return self._server.server_address[1]

    @property
    def host_port(self) -> str:
        """The entry for FETCH_ALLOW_HOSTS ("127.0.0.1:port", "[::1]:port")."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    def url(self, path: str = "/", *, host: str | None = None) -> str:
        """An address of this server; `host` names it differently (with FakeDNS)."""
        scheme = "https" if self.tls else "http"
        return f"{scheme}://{host or self.host_port.rsplit(':', 1)[0]}:{self.port}{path}"

    def paths(self) -> list[str]:
        return [r.path for r in self.requests]

    # --- lifecycle

    def make_server(self) -> _Server:
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        server = _Server((self.host, 0), self, family)
        if self.tls:
            server.socket = self.tls.wrap_socket(server.socket, server_side=True)
        return server

    def stop(self) -> None:
        self.stopping.set()
        super().stop()


class FakeDNS:
    """Replaces socket.getaddrinfo (via pytest's monkeypatch) with a scripted table.

    `add(name, ["10.0.0.1"], ["127.0.0.1"])`: the first lookup answers 10.0.0.1,
    later ones 127.0.0.1. IP literals go to the real getaddrinfo (no network);
    any other name fails as unknown. `lookups` counts the lookups per name.
    """

    def __init__(self, monkeypatch) -> None:
        self._real = socket.getaddrinfo
        self._table: dict[str, list[list[str]]] = {}
        self.lookups: dict[str, int] = {}
        monkeypatch.setattr(socket, "getaddrinfo", self.getaddrinfo)

    def add(self, name: str, *answers: list[str]) -> None:
        self._table[name.lower()] = [list(a) for a in answers]

    def getaddrinfo(self, host, port, family=0, type=0, proto=0, flags=0):
        name = host.decode() if isinstance(host, bytes) else str(host)
        try:
            ipaddress.ip_address(name)
        except ValueError:
            pass
        else:
            return self._real(host, port, family, type, proto, flags)
        answers = self._table.get(name.lower())
        if answers is None:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known (FakeDNS)")
        count = self.lookups.get(name.lower(), 0)
        self.lookups[name.lower()] = count + 1
        result = []
        for text in answers[min(count, len(answers) - 1)]:
            ip = ipaddress.ip_address(text)
            if ip.version == 6:
                result.append((socket.AF_INET6, socket.SOCK_STREAM, 6, "", (text, port, 0, 0)))
            else:
                result.append((socket.AF_INET, socket.SOCK_STREAM, 6, "", (text, port)))
        return result


def make_tls(*names: str) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """(server context with a certificate for `names`, client context trusting only
    its throwaway CA). Uses `cryptography`; EC keys keep it to a few milliseconds."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Jarvis test CA")])
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True, content_commitment=False, key_encipherment=False,
                data_encipherment=False, key_agreement=False, key_cert_sign=True,
                crl_sign=True, encipher_only=False, decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(
            x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )  # fmt: skip
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(n) for n in names]), False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False
        )
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    with tempfile.NamedTemporaryFile("wb", suffix=".pem") as chain:
        chain.write(cert.public_bytes(pem))
        chain.write(
            key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
        )
        chain.flush()
        server.load_cert_chain(chain.name)
    client = ssl.create_default_context(cadata=ca_cert.public_bytes(pem).decode("ascii"))
    return server, client
