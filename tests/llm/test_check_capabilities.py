"""Check tells what each model can do where the endpoint says so: llama.cpp's
/v1/models `meta` and its /props (the context the server runs with, a vision
projector), Ollama's /api/show (context length, "tools"/"vision"), vLLM's
max_model_len; anything not said reads "unknown", never "0". A 500-model list
comes with a filter, and the models ticked are the ones added."""

from __future__ import annotations

import re

import pytest

from apps.instance.models import ModelEntry
from apps.instance.services import connection_create
from tests.fakes.llm import FakeOpenAI

pytestmark = pytest.mark.django_db


def cells(page: str, model_id: str) -> list[str]:
    """The Context, Tools and Images cells of one model's row on the Check page."""
    row = re.search(rf'<tr data-model-row="{re.escape(model_id.lower())}">(.*?)</tr>', page, re.S)
    assert row, f"no row for {model_id}"
    return [
        re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td>(.*?)</td>", row.group(1), re.S)
    ][2:]


def check_page(admin_client, fake) -> tuple[str, str]:
    connection = connection_create(
        name="home", kind="openai", base_url=fake.base_url, location="local"
    )
    url = f"/admin/instance/connection/{connection.pk}/check/"
    return url, admin_client.get(url).content.decode()


def test_llama_cpp_context_and_images_come_from_its_props(admin_client):
    llama = {"id": "model.gguf", "meta": {"n_ctx_train": 32768, "n_vocab": 151936}}
    with FakeOpenAI(models=[llama]) as fake:
        fake.props = {
            "default_generation_settings": {"n_ctx": 8192},
            "modalities": {"vision": True},
        }
        _, page = check_page(admin_client, fake)
    # The context the server runs with, not the one the model was trained with.
    assert cells(page, "model.gguf") == ["8192 tokens", "unknown", "yes"]


def test_llama_cpp_without_props_gives_its_trained_context(admin_client):
    with FakeOpenAI(models=[{"id": "model.gguf", "meta": {"n_ctx_train": 32768}}]) as fake:
        _, page = check_page(admin_client, fake)
    assert cells(page, "model.gguf") == ["32768 tokens", "unknown", "unknown"]


def test_ollama_show_tells_context_tools_and_images(admin_client):
    with FakeOpenAI(models=["qwen3:8b", "llava:7b"]) as fake:
        fake.shown = {
            "qwen3:8b": {
                "model_info": {"general.architecture": "qwen3", "qwen3.context_length": 40960},
                "capabilities": ["completion", "tools", "thinking"],
            },
            "llava:7b": {
                "model_info": {"llama.context_length": 4096},
                "capabilities": ["completion", "vision"],
            },
        }
        url, page = check_page(admin_client, fake)
        assert cells(page, "qwen3:8b") == ["40960 tokens", "yes", "no"]
        assert cells(page, "llava:7b") == ["4096 tokens", "no", "yes"]
        admin_client.post(url, {"model": ["llava:7b"]})
    llava = ModelEntry.objects.get(model_id="llava:7b")
    assert (llava.context_length, llava.supports_tools, llava.supports_vision) == (
        4096,
        False,
        True,
    )


def test_vllm_max_model_len_and_a_zero_context_reads_unknown(admin_client):
    models = [
        {"id": "Qwen/Qwen2.5-7B-Instruct", "max_model_len": 32768},
        {"id": "mystery", "context_length": 0},
    ]
    with FakeOpenAI(models=models) as fake:
        _, page = check_page(admin_client, fake)
    assert cells(page, "Qwen/Qwen2.5-7B-Instruct")[0] == "32768 tokens"
    assert cells(page, "mystery") == ["unknown", "unknown", "unknown"]
    assert ">0<" not in page and "0 tokens" not in page


def test_a_server_with_neither_endpoint_is_asked_once_each(admin_client):
    with FakeOpenAI(models=[f"m{n}" for n in range(30)]) as fake:
        check_page(admin_client, fake)
        routes = [r.route for r in fake.requests]
    # /props is for a one-model server; /api/show stops at its first 404.
    assert routes.count("/api/show") == 1 and "/props" not in routes


def test_a_500_model_list_has_a_filter_and_adds_the_ticked_ones(admin_client):
    models = [f"vendor/model-{n:03d}" for n in range(500)]
    with FakeOpenAI(models=models) as fake:
        url, page = check_page(admin_client, fake)
        assert "500 models at" in page
        assert "data-model-filter" in page and "js/llm-check.js" in page
        assert page.count('name="model"') == 500
        response = admin_client.post(url, {"model": ["vendor/model-007", "vendor/model-481"]})
    assert response.status_code == 302
    assert sorted(ModelEntry.objects.values_list("model_id", flat=True)) == [
        "vendor/model-007",
        "vendor/model-481",
    ]


def test_the_add_all_action_keeps_what_the_endpoint_says(admin_client):
    with FakeOpenAI(models=["qwen3:8b"]) as fake:
        fake.shown = {
            "qwen3:8b": {
                "model_info": {"qwen3.context_length": 40960},
                "capabilities": ["completion", "tools"],
            }
        }
        connection = connection_create(
            name="home", kind="openai", base_url=fake.base_url, location="local"
        )
        admin_client.post(
            "/admin/instance/connection/",
            {"action": "add_found_models", "_selected_action": [connection.pk]},
        )
    entry = ModelEntry.objects.get(model_id="qwen3:8b")
    assert (entry.context_length, entry.supports_tools, entry.supports_vision) == (
        40960,
        True,
        False,
    )
