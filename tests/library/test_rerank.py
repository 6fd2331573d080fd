"""The optional reranker after fusion: off unless configured; a /rerank endpoint
(both wire shapes) or a cross-encoder in a directory; a cloud reranker only
ever receives cloud-allowed passages; a failing one leaves the fused order;
latest-first still holds after it."""

from __future__ import annotations

import pytest

from apps.chats.models import Chat
from apps.chats.tools.context import TurnContext
from apps.chats.tools.library import search_notes
from apps.instance.models import Connection
from apps.instance.selectors import instance_settings
from apps.library.ingest.sync import source_sync
from apps.library.models import Source
from apps.library.search import search
from apps.library.search.rerank import TOP, configured_reranker, forget_configured_reranker
from apps.mcp.reads import notes_search
from tests.fakes.rerank import FakeRerank
from tests.library.crossencoder import make_cross_encoder

NOTES = {
    "garden/compost.md": "# Compost\n\nTurn the compost heap every two weeks; add dry leaves.\n",
    "garden/hedge.md": "# Hedge\n\nTrim the hedge in late spring, after the birds have nested.\n",
    "garden/lawn.md": "# Lawn\n\nMow weekly from April; leave the clippings on the lawn in summer.\n",
    "home/boiler_service_2026-03.md": "# Boiler service — March 2026\n\nEngineer: Tomasz from "
    "WarmHome. Next service due March 2027.\n",
    "home/boiler_service_2026-10.md": "# Boiler service — October 2026\n\nEngineer: Priya from "
    "HeatRight. Next service due October 2027.\n",
}


@pytest.fixture
def library(owner, vault, make_source, embedder):
    for path, text in NOTES.items():
        vault.write(path, text)
    source = make_source(owner, vault, cloud=Source.Cloud.ALLOWED)
    source_sync(source=source, embedder=embedder)
    return source


@pytest.fixture
def fake():
    with FakeRerank() as server:
        yield server
    forget_configured_reranker()


def use_endpoint(fake: FakeRerank, *, location: str = "local", api: str = "jina") -> None:
    connection = Connection.objects.create(
        name=f"reranker-{location}", base_url=fake.base_url, location=location
    )
    row = instance_settings()
    row.reranker, row.reranker_connection, row.reranker_model, row.reranker_api = (
        "endpoint",
        connection,
        "bge-reranker-v2-m3",
        api,
    )
    row.save()  # the library forgets its cached choice on save


def test_it_is_off_unless_configured(owner, library, embedder):
    forget_configured_reranker()
    assert configured_reranker() is None
    results = search(user=owner, query="hedge birds", embedder=embedder).results
    assert all("rerank" not in r.legs for r in results)


@pytest.mark.parametrize("api", ["jina", "tei"])
def test_an_endpoint_reorders_the_top_passages(owner, library, embedder, fake, api):
    use_endpoint(fake, api=api)
    # The fused order puts the lawn first; the reranker counts query words.
    query = "when to mow the lawn hedge trim spring birds nested"
    results = search(user=owner, query=query, mode="lookup", embedder=embedder).results
    assert results[0].path == "garden/hedge.md"  # the most query words
    assert "rerank" in results[0].legs
    [request] = fake.requests
    assert request["path"] == "/rerank"
    body = request["json"]
    assert body["query"] == query
    texts = body["documents"] if api == "jina" else body["texts"]
    assert 2 <= len(texts) <= TOP
    assert any("Trim the hedge" in t for t in texts)
    if api == "jina":
        assert body["model"] == "bge-reranker-v2-m3"


def test_latest_first_still_holds_after_reranking(owner, library, embedder, fake):
    use_endpoint(fake)
    # The reranker prefers the March note (it names Tomasz and WarmHome).
    results = search(user=owner, query="boiler engineer Tomasz WarmHome", embedder=embedder).results
    paths = [r.path for r in results]
    assert paths[0] == "home/boiler_service_2026-10.md" and results[0].is_latest
    if "home/boiler_service_2026-03.md" in paths:
        assert paths.index("home/boiler_service_2026-03.md") > 0


def test_a_failing_endpoint_leaves_the_fused_order(owner, library, embedder, fake):
    plain = [r.path for r in search(user=owner, query="hedge birds spring", reranker=None).results]
    use_endpoint(fake)
    fake.fail_with = 500
    results = search(user=owner, query="hedge birds spring", embedder=embedder).results
    assert [r.path for r in results] == plain
    assert fake.requests and all("rerank" not in r.legs for r in results)


def test_a_cloud_reranker_only_receives_cloud_allowed_passages(
    owner, library, make_vault, make_source, embedder, fake
):
    private = make_vault("olivia-private")
    private.write("diary.md", "# Diary\n\nI trimmed the hedge and thought about the birds.\n")
    local = make_source(owner, private, name="diary", cloud=Source.Cloud.LOCAL_ONLY)
    source_sync(source=local, embedder=embedder)
    use_endpoint(fake, location="cloud")
    # A cloud model's turn that also looks over everything (as the chat's
    # hold-back check does): the local-only passage stays out of the request.
    results = search(
        user=owner, query="trim the hedge birds", embedder=embedder, for_cloud_model=True
    ).results
    assert any(r.path == "diary.md" for r in results)  # still found, in its fused place
    assert fake.sent_texts and not any("thought about the birds" in t for t in fake.sent_texts)
    assert all("rerank" not in r.legs for r in results if r.path == "diary.md")


def test_a_cross_encoder_in_a_directory_reranks_locally(owner, library, embedder, tmp_path):
    folder = make_cross_encoder(tmp_path / "cross-encoder", favourite="leaves")
    row = instance_settings()
    row.reranker, row.reranker_dir = "directory", str(folder)
    row.full_clean(exclude=["default_model", "reranker_connection"])
    row.save()
    try:
        query = "garden jobs for the lawn in spring"
        plain = search(
            user=owner, query=query, mode="lookup", reranker=None, embedder=embedder
        ).results
        results = search(user=owner, query=query, mode="lookup", embedder=embedder).results
    finally:
        forget_configured_reranker()
    assert plain[0].path != "garden/compost.md"  # only the cross-encoder puts it first
    assert results[0].path == "garden/compost.md"  # the one passage with "leaves"
    assert "rerank" in results[0].legs


HEDGE = "when to mow the lawn hedge trim spring birds nested"


def test_a_cloud_reranker_never_sees_a_search_not_made_for_a_cloud_model(
    owner, library, embedder, fake, client
):
    use_endpoint(fake, location="cloud")
    # The search function's own default, the library's search box, MCP, and a
    # local model's chat tool: the question stays on the server.
    results = search(user=owner, query=HEDGE, mode="lookup", embedder=embedder).results
    assert results and all("rerank" not in r.legs for r in results)
    client.force_login(owner)
    assert client.get("/library/", {"q": HEDGE}).status_code == 200
    assert notes_search(owner, HEDGE)["results"]
    chat = Chat.objects.create(owner=owner, title="local")
    local_turn = TurnContext(user=owner, chat=chat, cloud=False, notes_only=False)
    assert "Trim the hedge" in search_notes(local_turn, {"query": HEDGE})
    assert fake.requests == []


def test_a_cloud_reranker_reorders_a_cloud_models_search(owner, library, embedder, fake):
    use_endpoint(fake, location="cloud")
    chat = Chat.objects.create(owner=owner, title="cloud")
    cloud_turn = TurnContext(user=owner, chat=chat, cloud=True, notes_only=False)
    search_notes(cloud_turn, {"query": HEDGE, "mode": "lookup"})
    assert [r["json"]["query"] for r in fake.requests] == [HEDGE]


def test_a_local_reranker_reorders_every_search(owner, library, embedder, fake, client):
    use_endpoint(fake, location="local")
    client.force_login(owner)
    assert client.get("/library/", {"q": HEDGE}).status_code == 200
    assert [r["json"]["query"] for r in fake.requests] == [HEDGE]
