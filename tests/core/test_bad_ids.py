"""Ids that do not fit: every URL pattern, the query parameters, form fields and
websocket paths that take an id answer 404 or 400 for a huge, negative or
non-numeric id, never a 500.

SQLite integers are signed 64-bit; Python's are not, so an id one past
2**63 - 1 used to reach the database and raise OverflowError."""

from __future__ import annotations

import json
import re

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver
from django.urls.resolvers import RegexPattern, RoutePattern
from django.utils.regex_helper import normalize

from apps.chats.models import Chat
from apps.digest.models import Digest
from apps.drafts.services import draft_create
from apps.library.services.adding import upload_add
from jarvis_site.asgi import application
from tests.support.processes import daphne_server
from tests.support.sockets import websocket_handshake

BAD_IDS = [
    "99999999999999999999999",  # far past 64 bits
    "9223372036854775808",  # 2**63: one past SQLite's largest integer
    "18446744073709551616",  # 2**64
    "-1",
    "-9223372036854775809",
    "abc",
    "1e3",
    "0x10",
    "²",  # str.isdigit() says yes; int() says no
    "\uff11\uff12",  # full-width digits: int() accepts them
    "00000000000000000000001",
]


@pytest.fixture
def members_things(member, tmp_path, settings):
    """One of each kind of object the member owns, so a URL with two ids can
    reach its second id with a real first one."""
    settings.DRAFTS_ROOT = tmp_path / "drafts"
    chat = Chat.objects.create(owner=member, title="Groceries")
    draft = draft_create(owner=member, title="Letter", filename="letter.md", content="Hi\n")
    added = upload_add(owner=member, name="note.md", data=b"# A note\n\nHello.\n")
    digest = Digest.objects.create(owner=member, trigger="manual", status="done")
    return {
        "chats": chat.pk,
        "drafts": draft.pk,
        "library:document": added.document.pk,
        "library:collection": added.document.source_id,
        "digest": digest.pk,
    }


def _patterns(resolvers=None, prefix=(), namespace=""):
    """Every URLPattern under the root URLconf, with the chain of route pieces
    that leads to it and its namespaced name."""
    for entry in resolvers if resolvers is not None else get_resolver().url_patterns:
        if isinstance(entry, URLResolver):
            inner = f"{namespace}:{entry.namespace}" if entry.namespace else namespace
            yield from _patterns(entry.url_patterns, (*prefix, entry.pattern), inner.strip(":"))
        elif isinstance(entry, URLPattern):
            yield (*prefix, entry.pattern), f"{namespace}:{entry.name or ''}".strip(":")


ROUTE_PARAM = re.compile(r"<(?:(?P<converter>[^>:]+):)?(?P<name>[^>]+)>")


def _pieces(pattern) -> list[str | tuple[str, str]]:
    """A route or regex as literal text and (param name, kind) placeholders."""
    if isinstance(pattern, RoutePattern):
        route, out, last = str(pattern._route), [], 0
        for match in ROUTE_PARAM.finditer(route):
            out.append(route[last : match.start()])
            out.append((match["name"], match["converter"] or "str"))
            last = match.end()
        out.append(route[last:])
        return out
    assert isinstance(pattern, RegexPattern)
    # Django's own reverse() uses normalize(): first alternative, minimal repeats.
    template, _params = normalize(pattern._regex)[0]
    out, last = [], 0
    for match in re.finditer(r"%\((\w+)\)s", template):
        out.append(template[last : match.start()])
        out.append((match[1], "regex"))
        last = match.end()
    out.append(template[last:])
    return out


def _plausible(name: str, url_name: str, things: dict) -> str:
    """A value that reaches the view for a parameter that is not under test."""
    if name == "pk":
        for prefix, pk in sorted(things.items(), key=lambda item: -len(item[0])):
            if url_name.startswith(prefix):
                return str(pk)
    return "1"


def _urls_with_bad_ids(things: dict):
    for chain, url_name in _patterns():
        pieces = [piece for pattern in chain for piece in _pieces(pattern)]
        params = [piece for piece in pieces if isinstance(piece, tuple)]
        for under_test, _kind in params:
            for bad in BAD_IDS:
                text = "".join(
                    piece
                    if isinstance(piece, str)
                    else bad
                    if piece[0] == under_test
                    else _plausible(piece[0], url_name, things)
                    for piece in pieces
                )
                yield url_name, "/" + text


def test_the_walk_covers_every_app():
    names = {url_name.split(":")[0] for _chain, url_name in _patterns()}
    assert {"chats", "drafts", "library", "digest", "core", "accounts", "admin"} <= names


@pytest.mark.parametrize("method", ["get", "post"])
def test_no_url_pattern_gives_500_for_an_id_that_does_not_fit(
    client, member, members_things, method
):
    client.force_login(member)
    failures = []
    count = 0
    for url_name, url in _urls_with_bad_ids(members_things):
        count += 1
        try:
            response = getattr(client, method)(url)
        except Exception as exc:  # the test client re-raises a view's exception
            failures.append(f"{method.upper()} {url} ({url_name}): {type(exc).__name__}: {exc}")
            continue
        if response.status_code >= 500:
            failures.append(f"{method.upper()} {url} ({url_name}): {response.status_code}")
    assert count > 300, "the walk found suspiciously few id-taking URLs"
    assert not failures, "\n".join(failures)


def test_an_admin_walking_the_same_urls_gets_no_500(client, admin, members_things):
    client.force_login(admin)
    failures = []
    for url_name, url in _urls_with_bad_ids(members_things):
        try:
            response = client.get(url)
        except Exception as exc:
            failures.append(f"GET {url} ({url_name}): {type(exc).__name__}: {exc}")
            continue
        if response.status_code >= 500:
            failures.append(f"GET {url} ({url_name}): {response.status_code}")
    assert not failures, "\n".join(failures)


# --- Query parameters and form fields that carry an id ----------------------


def _no_500(response_or_call):
    try:
        response = response_or_call()
    except Exception as exc:  # the test client re-raises what the view raised
        pytest.fail(f"{type(exc).__name__}: {exc}")
    assert response.status_code < 500
    return response


@pytest.mark.parametrize("bad", BAD_IDS)
@pytest.mark.parametrize(
    "url",
    [
        "/library/?collection={}",
        "/library/?collection={}&q=hello",
        "/library/records/?collection={}",
        "/library/records/?category=x&collection={}",
    ],
)
def test_a_collection_filter_that_does_not_fit_lists_everything(client, member, bad, url):
    client.force_login(member)
    response = _no_500(lambda: client.get(url.format(bad)))
    assert response.status_code == 200


@pytest.mark.parametrize("bad", BAD_IDS)
def test_the_editor_ignores_a_proposal_id_that_does_not_fit(client, member, members_things, bad):
    client.force_login(member)
    response = _no_500(lambda: client.get(f"/drafts/{members_things['drafts']}/?proposal={bad}"))
    assert response.status_code == 200
    assert f'data-proposal="{bad}"' not in response.content.decode()


@pytest.mark.django_db(transaction=True)  # the reply is written by the runner's own task
@pytest.mark.parametrize(
    "data",
    [
        {"mention": [f"document:{bad}" for bad in BAD_IDS]},
        {"mention": [f"collection:{bad}" for bad in BAD_IDS]},
    ],
    ids=["documents", "collections"],
)
def test_sending_a_message_with_ids_that_do_not_fit_drops_them(client, member, data):
    client.force_login(member)
    response = _no_500(lambda: client.post("/chat/send/", {"text": "What is new?", **data}))
    assert response.status_code == 302
    question = Chat.objects.get(owner=member).messages.get(role="user")
    assert question.text == "What is new?"
    assert not question.mentions


@pytest.mark.parametrize("bad", BAD_IDS)
def test_a_sharing_group_that_does_not_fit_is_a_form_error(client, member, members_things, bad):
    client.force_login(member)
    pk = members_things["library:collection"]
    response = _no_500(
        lambda: client.post(
            f"/library/collections/{pk}/",
            {f"c{pk}-sharing": "groups", f"c{pk}-groups": bad, f"c{pk}-cloud": "allowed"},
        )
    )
    assert response.status_code == 302
    assert not member.sources.get(pk=pk).shared_groups.exists()


@pytest.mark.parametrize("bad", BAD_IDS)
def test_a_default_model_that_does_not_fit_is_a_form_error(client, member, bad):
    client.force_login(member)
    response = _no_500(lambda: client.post("/settings/assistant/", {"default_model": bad}))
    assert response.status_code == 400


@pytest.mark.parametrize("bad", BAD_IDS)
def test_an_admin_registering_a_folder_for_an_owner_that_does_not_fit(client, admin, bad):
    client.force_login(admin)
    response = _no_500(
        lambda: client.post(
            "/library/collections/register/",
            {"owner": bad, "name": "x", "path": "x", "kind": "vault", "sharing": "owner"},
        )
    )
    assert response.status_code == 400


# --- Websockets --------------------------------------------------------------


def _ws_headers(user) -> list[tuple[bytes, bytes]]:
    client = Client()
    client.force_login(user)
    cookie = client.cookies[settings.SESSION_COOKIE_NAME].value
    return [
        (b"host", b"localhost"),
        (b"origin", b"http://localhost"),
        (b"cookie", f"{settings.SESSION_COOKIE_NAME}={cookie}".encode()),
    ]


WS_PATHS = [
    *(f"/ws/chats/{bad}/" for bad in BAD_IDS),
    *(f"/ws/drafts/{bad}/" for bad in BAD_IDS),
    "/ws/nothing-here/",
    "/ws/",
    "/",
]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("path", WS_PATHS)
def test_a_websocket_path_that_does_not_fit_is_refused(member, path):
    headers = _ws_headers(member)

    async def attempt():
        communicator = WebsocketCommunicator(application, path, headers=headers)
        connected, code = await communicator.connect()
        await communicator.disconnect()
        return connected, code

    connected, code = async_to_sync(attempt)()
    assert not connected
    assert code == 4404


@pytest.mark.django_db(transaction=True)
def test_a_chat_socket_ignores_a_refresh_id_that_does_not_fit(member):
    chat = Chat.objects.create(owner=member, title="Groceries")
    headers = _ws_headers(member)
    messages = [
        *(json.dumps({"refresh": bad}) for bad in BAD_IDS),
        '{"refresh": 99999999999999999999999}',
        '{"refresh": -1}',
        '{"refresh": 1e400}',
        '{"refresh": true}',
        '{"refresh": [1]}',
        "[1]",
        "not json",
    ]

    async def scenario():
        communicator = WebsocketCommunicator(application, f"/ws/chats/{chat.pk}/", headers=headers)
        connected, _ = await communicator.connect()
        assert connected
        while not await communicator.receive_nothing(timeout=0.2):
            pass  # whatever the socket sends first
        for text in messages:
            await communicator.send_to(text_data=text)
        quiet = await communicator.receive_nothing(timeout=0.5)
        await communicator.disconnect()  # re-raises what the consumer raised
        return quiet

    assert async_to_sync(scenario)()


@pytest.mark.django_db(transaction=True)
def test_a_live_server_refuses_an_unrouted_websocket_without_a_traceback(member):
    cookie = _ws_headers(member)[-1][1].decode()
    with daphne_server() as base:
        for path in ["/ws/chats/-1/", "/ws/chats/99999999999999999999999/", "/ws/nope/"]:
            status, text = websocket_handshake(base, path, {"Origin": base, "Cookie": cookie})
            assert status == 403, text
            assert "Traceback" not in text
        # The same socket on a real chat is accepted: the refusals above are about the path.
        chat = Chat.objects.create(owner=member)
        status, _ = websocket_handshake(
            base, f"/ws/chats/{chat.pk}/", {"Origin": base, "Cookie": cookie}
        )
        assert status == 101
