"""Figures and photos described by a vision model, against the fake model
servers over real HTTP: what is sent, what is indexed, what is remembered, and
that an image from local-only content never reaches a cloud model, whatever
the settings say (the check sits at the provider boundary, apps.llm.stream_chat).
"""

from __future__ import annotations

import base64
import io

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth.models import Group, Permission
from PIL import Image

from apps.accounts.permissions import USE_CLOUD_MODELS, codename
from apps.instance.selectors import instance_settings
from apps.instance.services import connection_create, model_add
from apps.library.models import Document, ImageDescription, Source
from apps.library.search import search
from apps.library.services.adding import upload_add, uploads_source
from apps.library.services.documents import document_ingest
from apps.llm import LocalOnlyRefused, ProviderConfig, reply_text
from apps.llm import transcript as t
from tests.fakes.llm import FakeAnthropic, FakeOpenAI, Reply
from tests.support.documents import chart_image, pdf_with_figure, photo_bytes

pytestmark = pytest.mark.django_db(transaction=True)

CAPTION = "Figure 1: Monthly gas use in cubic metres, 2025."
DESCRIPTION = (
    "A bar chart of eight turquoise bars rising towards midwinter, with the tallest "
    "bar in January; the vertical axis counts cubic metres of gas."
)


@pytest.fixture
def home_llm():
    with FakeOpenAI(models=["llava:13b"]) as fake:
        fake.default = Reply(text=DESCRIPTION)
        yield fake


@pytest.fixture
def cloud_llm():
    with FakeAnthropic(models=["claude-vision"], api_key="sk-ant-cloud-secret") as fake:
        fake.default = Reply(text="A cloud description.")
        yield fake


@pytest.fixture
def local_vision(home_llm):
    connection = connection_create(
        name="home", kind="openai", base_url=home_llm.base_url, location="local"
    )
    return model_add(connection=connection, model_id="llava:13b", supports_vision=True)


@pytest.fixture
def cloud_vision(cloud_llm):
    connection = connection_create(
        name="cloud",
        kind="anthropic",
        base_url=cloud_llm.base_url,
        location="cloud",
        api_key="sk-ant-cloud-secret",
    )
    return model_add(connection=connection, model_id="claude-vision", supports_vision=True)


@pytest.fixture
def cloud_owner(owner):
    """The owner may use cloud models (else no cloud model is ever a candidate,
    and a test that nothing reached one could not fail)."""
    group = Group.objects.create(name="cloud users")
    group.permissions.add(Permission.objects.get(codename=codename(USE_CLOUD_MODELS)))
    owner.groups.add(group)
    return type(owner).objects.get(pk=owner.pk)


@pytest.fixture
def describing(owner):
    """The owner's uploads collection describes its figures and photos."""
    source = uploads_source(owner)
    source.describe_images = Source.Describe.ON
    source.save(update_fields=["describe_images"])
    return source


def add(owner, name: str, data: bytes, embedder) -> Document:
    added = upload_add(owner=owner, name=name, data=data)
    assert added.document is not None, added.error
    return document_ingest(document=added.document, embedder=embedder)


def figure_text(document: Document) -> str:
    [chunk] = document.chunks.filter(annotation="figure")
    return chunk.text


def report(*, chart: bytes | None = None) -> bytes:
    return pdf_with_figure(body="Annual energy report for the house.", caption=CAPTION, chart=chart)


def test_a_figure_is_described_by_the_local_vision_model_and_found_by_what_it_shows(
    owner, describing, local_vision, home_llm, embedder
):
    document = add(owner, "energy-2025.pdf", report(), embedder)

    assert figure_text(document) == f"[FIGURE p.1] {CAPTION} — {DESCRIPTION}"
    [request] = home_llm.chat_requests
    [(media_type, picture)] = request.images
    assert media_type == "image/jpeg"
    assert Image.open(io.BytesIO(picture)).size == (640, 400)  # the chart itself, not the page
    asked = request.json["messages"][-1]["content"][0]["text"]
    assert "page 1" in asked and CAPTION in asked
    results = search(user=owner, query="turquoise bars chart", embedder=embedder).results
    assert results[0].document_id == document.pk and results[0].annotation == "figure"


def test_a_figure_is_described_again_only_when_it_changes(
    owner, describing, local_vision, home_llm, embedder
):
    document = add(owner, "energy-2025.pdf", report(), embedder)
    assert len(home_llm.chat_requests) == 1

    document_ingest(document=document, full=True, embedder=embedder)  # "Reprocess"
    assert len(home_llm.chat_requests) == 1  # remembered by the image's hash

    home_llm.default = Reply(text="A line chart of falling electricity use.")
    other = add(owner, "energy-2026.pdf", report(chart=chart_image(seed=9)), embedder)
    assert len(home_llm.chat_requests) == 2
    assert figure_text(other).endswith("A line chart of falling electricity use.")
    assert ImageDescription.objects.filter(source=describing).count() == 2


def test_progress_is_shown_while_figures_are_described(
    owner, describing, local_vision, home_llm, embedder
):
    seen: list[str] = []

    def answer(body):
        seen.extend(Document.objects.values_list("progress", flat=True))
        return Reply(text=DESCRIPTION)

    home_llm.queue(answer)
    document = add(owner, "energy-2025.pdf", report(), embedder)

    assert seen == ["describing image 1 of 1"]
    assert document.progress == ""  # cleared once ready


def test_without_a_vision_model_the_caption_alone_is_indexed(owner, describing, embedder):
    document = add(owner, "energy-2025.pdf", report(), embedder)

    assert figure_text(document) == f"[FIGURE p.1] {CAPTION}"
    assert "1 figure was indexed by caption only: no vision model is configured" in (
        document.warnings
    )


def test_a_collection_that_does_not_describe_sends_nothing(owner, local_vision, home_llm, embedder):
    assert not instance_settings().describe_images  # opt-in: off by default

    document = add(owner, "energy-2025.pdf", report(), embedder)

    assert home_llm.chat_requests == []
    assert figure_text(document) == f"[FIGURE p.1] {CAPTION}"
    assert document.warnings == []


def test_a_local_only_figure_never_reaches_the_cloud_model(
    cloud_owner, describing, cloud_vision, cloud_llm, embedder, settings
):
    owner = cloud_owner
    settings_row = instance_settings()
    settings_row.vision_model = cloud_vision  # even when the admin picked the cloud model
    settings_row.save()
    describing.cloud = Source.Cloud.LOCAL_ONLY
    describing.save(update_fields=["cloud"])

    document = add(owner, "medical-report.pdf", report(), embedder)

    assert cloud_llm.requests == []
    assert figure_text(document) == f"[FIGURE p.1] {CAPTION}"
    assert (
        "1 figure was indexed by caption only: no local vision model is available to this "
        "local-only collection" in document.warnings
    )


def test_a_local_only_figure_goes_to_the_local_model_when_there_is_one(
    owner, describing, cloud_vision, cloud_llm, local_vision, home_llm, embedder
):
    settings_row = instance_settings()
    settings_row.vision_model = cloud_vision
    settings_row.save()
    describing.cloud = Source.Cloud.LOCAL_ONLY
    describing.save(update_fields=["cloud"])

    document = add(owner, "medical-report.pdf", report(), embedder)

    assert cloud_llm.requests == []
    assert len(home_llm.chat_requests) == 1
    assert figure_text(document).endswith(DESCRIPTION)


def test_a_photo_is_found_by_what_it_shows(owner, describing, local_vision, home_llm, embedder):
    home_llm.default = Reply(
        text="A photo of the data label on a wall-mounted gas boiler in a kitchen cupboard."
    )
    data = photo_bytes("Vaillant ecoTEC plus 832\nSerial 21184400", orientation=6)

    document = add(owner, "IMG_2041.png", data, embedder)

    [photo] = document.chunks.filter(annotation="photo")
    assert photo.text.startswith("[PHOTO] A photo of the data label on a wall-mounted gas boiler")
    [(_, sent)] = home_llm.chat_requests[0].images
    assert Image.open(io.BytesIO(sent)).height > Image.open(io.BytesIO(sent)).width  # upright
    results = search(user=owner, query="the photo of the boiler's label", embedder=embedder).results
    assert results[0].document_id == document.pk


# --- the provider boundary ------------------------------------------------------------


def _image_turn(**flag) -> list[t.Turn]:
    block = {"type": "image", "media_type": "image/png", "data": base64.b64encode(b"x").decode()}
    block.update(flag)
    return [{"role": "user", "blocks": [block, t.text("What is this?")]}]


@pytest.mark.parametrize("flag", [{"local_only": True}, {}], ids=["local-only", "unmarked"])
def test_a_cloud_config_refuses_a_local_only_image_before_sending_anything(cloud_llm, flag):
    config = ProviderConfig(
        kind="anthropic",
        base_url=cloud_llm.base_url,
        api_key="sk-ant-cloud-secret",
        model="claude-vision",
    )  # built by hand: cloud unless it says otherwise

    with pytest.raises(LocalOnlyRefused, match="may not go to a cloud model"):
        async_to_sync(reply_text)(config, system="", turns=_image_turn(**flag))
    assert cloud_llm.requests == []


def test_images_reach_each_wire_format(cloud_llm, home_llm):
    png = io.BytesIO()
    Image.new("RGB", (4, 3), "red").save(png, format="PNG")
    turns = [
        {
            "role": "user",
            "blocks": [
                t.image("image/png", base64.b64encode(png.getvalue()).decode(), local_only=False),
                t.text("Describe it."),
            ],
        }
    ]
    cloud = ProviderConfig(
        kind="anthropic",
        base_url=cloud_llm.base_url,
        api_key="sk-ant-cloud-secret",
        model="claude-vision",
    )
    local = ProviderConfig(
        kind="openai", base_url=home_llm.base_url, api_key=None, model="llava", cloud=False
    )

    assert async_to_sync(reply_text)(cloud, system="", turns=turns) == "A cloud description."
    assert async_to_sync(reply_text)(local, system="", turns=turns) == DESCRIPTION

    for fake in (cloud_llm, home_llm):
        [request] = fake.chat_requests
        [(media_type, data)] = request.images
        assert media_type == "image/png" and data == png.getvalue()
    anthropic_content = cloud_llm.chat_requests[0].json["messages"][0]["content"]
    assert [part["type"] for part in anthropic_content] == ["image", "text"]
    openai_content = home_llm.chat_requests[0].json["messages"][0]["content"]
    assert [part["type"] for part in openai_content] == ["text", "image_url"]


def test_a_figure_in_a_private_folder_of_a_cloud_allowed_collection_never_reaches_the_cloud(
    cloud_owner, vault, make_source, cloud_vision, cloud_llm, embedder
):
    owner = cloud_owner
    from apps.library.ingest.sync import source_sync

    settings_row = instance_settings()
    settings_row.vision_model = cloud_vision  # the admin picked the cloud model
    settings_row.save()
    vault.write_bytes("private/medical-report.pdf", report())
    source = make_source(owner, vault, cloud=Source.Cloud.ALLOWED)
    source.describe_images = Source.Describe.ON
    source.save(update_fields=["describe_images"])
    source_sync(source=source, embedder=embedder)

    document = source.documents.get(path="private/medical-report.pdf")
    assert document.in_private_dir
    assert cloud_llm.requests == []
    assert figure_text(document) == f"[FIGURE p.1] {CAPTION}"
    # The same collection's figures outside the private folder do go to it.
    vault.write_bytes("reports/energy-2025.pdf", report(chart=chart_image(seed=1)))
    source_sync(source=source, embedder=embedder)
    assert len(cloud_llm.requests) == 1
