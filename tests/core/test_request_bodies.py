"""Request bodies bounded at the server (apps.core.bodies), against a real daphne.

Each test speaks HTTP over a raw socket so it controls exactly what is sent:
the 413s here arrive while the client has sent nothing but headers, which is
the point (a body refused before it is read costs the server nothing).
"""

from __future__ import annotations

import socket
import uuid
from urllib.parse import urlsplit

import pytest
from django.conf import settings
from django.test import Client

from apps.library.ingest.storage import original_path
from apps.library.models import Document
from tests.support.processes import daphne_server

UPLOAD_MAX_MB = 8
CSRF_SECRET = "a" * 32  # an unmasked secret is a valid token (cookie and header alike)


@pytest.fixture(scope="module")
def server(django_db_setup, django_db_blocker):
    with (
        django_db_blocker.unblock(),
        daphne_server(
            JARVIS_UPLOAD_MAX_MB=str(UPLOAD_MAX_MB), JARVIS_TEST_HUEY_IMMEDIATE="0"
        ) as url,
    ):
        parts = urlsplit(url)
        yield parts.hostname, parts.port


def connect(server) -> socket.socket:
    sock = socket.create_connection(server, timeout=60)
    return sock


def read_response(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes or has sent a whole response."""
    data = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            break
        if not chunk:
            break
        data += chunk
        head, sep, body = data.partition(b"\r\n\r\n")
        if sep:
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:") and len(body) >= int(
                    line.split(b":")[1]
                ):
                    return data
    return data


def status_of(response: bytes) -> int:
    return int(response.split(b" ", 2)[1])


def headers(method: str, path: str, **fields: str) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1"]
    lines += [f"{name.replace('_', '-')}: {value}" for name, value in fields.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def multipart(boundary: str, parts: list[tuple[str, bytes]]) -> bytes:
    # Joined once: growing one bytes object part by part copies it every time
    # (a minute for 100,000 parts).
    out = [
        f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'.encode()
        + value
        + b"\r\n"
        for name, value in parts
    ]
    return b"".join(out) + f"--{boundary}--\r\n".encode()


def healthz(server) -> int:
    with connect(server) as sock:
        sock.sendall(headers("GET", "/healthz", Connection="close"))
        return status_of(read_response(sock))


def test_an_oversized_content_length_is_refused_before_the_body_is_sent(server):
    too_big = (UPLOAD_MAX_MB + 2) * 1024 * 1024
    with connect(server) as sock:
        sock.sendall(
            headers(
                "POST",
                "/library/add/upload/",
                Cookie=f"{settings.SESSION_COOKIE_NAME}=whatever",
                Content_Type="multipart/form-data; boundary=x",
                Content_Length=str(too_big),
            )
        )
        # Not one byte of the body has been sent.
        response = read_response(sock)
    assert status_of(response) == 413
    assert b"request body too large" in response


def test_an_anonymous_multipart_post_to_sign_in_is_refused_without_being_read(server):
    # Far under the upload limit, far over anything a signed-out form sends.
    with connect(server) as sock:
        sock.sendall(
            headers(
                "POST",
                "/accounts/login/",
                Content_Type="multipart/form-data; boundary=x",
                Content_Length=str(4 * 1024 * 1024),
            )
        )
        response = read_response(sock)
    assert status_of(response) == 413
    assert healthz(server) in (200, 503)  # the server answers; 503 = no worker here


def test_a_chunked_body_is_cut_off_at_the_bound(server):
    chunk = b"x" * 65536
    framed = f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n"
    sent = 0
    with connect(server) as sock:
        sock.sendall(
            headers(
                "POST",
                "/library/add/upload/",
                Cookie=f"{settings.SESSION_COOKIE_NAME}=whatever",
                Content_Type="application/octet-stream",
                Transfer_Encoding="chunked",
            )
        )
        try:
            # Up to twice the bound: the server must stop it long before.
            while sent < 2 * (UPLOAD_MAX_MB + 1) * 1024 * 1024:
                sock.sendall(framed)
                sent += len(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass
        response = read_response(sock)
    assert status_of(response) == 413
    assert sent < 2 * (UPLOAD_MAX_MB + 1) * 1024 * 1024


def test_a_body_shorter_than_its_content_length_claims_does_not_reach_the_site(server):
    # The client promises more than it sends and goes quiet: nothing is
    # answered for a body that has not arrived, and other requests still are.
    with connect(server) as sock:
        sock.sendall(
            headers(
                "POST",
                "/accounts/login/",
                Content_Type="application/x-www-form-urlencoded",
                Content_Length="1000",
            )
            + b"username=a"
        )
        sock.settimeout(2)
        with pytest.raises(TimeoutError):
            sock.recv(1)
        assert healthz(server) in (200, 503)


def test_a_body_of_100000_tiny_parts_is_answered_and_the_server_stays_up(server):
    boundary = uuid.uuid4().hex
    body = multipart(boundary, [("f", b"x")] * 100_000)
    with connect(server) as sock:
        sock.sendall(
            headers(
                "POST",
                "/accounts/login/",
                Cookie=f"{settings.SESSION_COOKIE_NAME}=forged; csrftoken={CSRF_SECRET}",
                X_CSRFToken=CSRF_SECRET,
                Content_Type=f"multipart/form-data; boundary={boundary}",
                Content_Length=str(len(body)),
                Connection="close",
            )
            + body
        )
        response = read_response(sock)
    # Django's own limit on the number of fields answers it (400), streaming.
    assert status_of(response) == 400
    assert healthz(server) in (200, 503)


@pytest.mark.django_db(transaction=True)
def test_a_members_upload_under_the_limit_still_arrives(server, owner):
    client = Client()
    client.force_login(owner)
    session = client.cookies[settings.SESSION_COOKIE_NAME].value
    boundary = uuid.uuid4().hex
    # Larger than Twisted's in-memory size and Django's spooling size.
    data = b"word " * (1024 * 1024)
    body = (
        (
            f"--{boundary}\r\n"
            'Content-Disposition: form-data; name="files"; filename="words.txt"\r\n'
            "Content-Type: text/plain\r\n\r\n"
        ).encode()
        + data
        + f"\r\n--{boundary}--\r\n".encode()
    )
    with connect(server) as sock:
        sock.sendall(
            headers(
                "POST",
                "/library/add/upload/",
                Cookie=f"{settings.SESSION_COOKIE_NAME}={session}; csrftoken={CSRF_SECRET}",
                X_CSRFToken=CSRF_SECRET,
                HX_Request="true",
                Content_Type=f"multipart/form-data; boundary={boundary}",
                Content_Length=str(len(body)),
                Connection="close",
            )
            + body
        )
        response = read_response(sock)
    assert status_of(response) == 200
    assert b"words.txt" in response
    [document] = Document.objects.filter(source__owner=owner)
    # Read to Django in pieces (apps.core.bodies.streamed), every byte arrived.
    assert original_path(document).read_bytes() == data
