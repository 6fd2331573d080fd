"""The models list in admin says "unknown" for a context length nobody
stated, not "0"."""

from __future__ import annotations

import pytest
from django.test import Client

from apps.instance.models import ModelEntry
from apps.instance.services import connection_create

pytestmark = pytest.mark.django_db


def test_an_unstated_context_length_reads_unknown_and_a_stated_one_its_number(admin):
    connection = connection_create(
        name="home", kind="openai", base_url="http://127.0.0.1:8080/v1", location="local"
    )
    ModelEntry.objects.create(connection=connection, model_id="mystery", context_length=0)
    ModelEntry.objects.create(connection=connection, model_id="qwen", context_length=32768)
    client = Client()
    client.force_login(admin)
    html = client.get("/admin/instance/modelentry/").content.decode()
    rows = {
        name: next(row for row in html.split("<tr") if f"home:{name}<" in row)
        for name in ("mystery", "qwen")
    }
    assert "unknown" in rows["mystery"] and ">0<" not in rows["mystery"]
    assert "32,768" in rows["qwen"]
