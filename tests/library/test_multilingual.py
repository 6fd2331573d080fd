"""A non-English household (issue 16.5): an admin chooses the multilingual
embedding model, the worker re-embeds with progress on the Jobs page while
search keeps the old vectors, and German notes are found by German questions
with umlauts and compounds."""

from __future__ import annotations

import numpy as np
import pytest
from django.urls import reverse

from apps.core.models import JobRun
from apps.instance.models import InstanceSettings
from apps.instance.selectors import instance_settings
from apps.library.index import reindex as reindex_module
from apps.library.index.embeddings import MULTILINGUAL_MODEL, get_embedder
from apps.library.index.tables import index_state
from apps.library.ingest.sync import source_sync
from apps.library.search import search
from apps.library.search.query import compound_split

HEIZUNG = (
    "# Heizung\n\nDie jährliche Wartung der Heizung macht Herr Müller von der Firma "
    "Wärmetechnik Schulz. Nächster Termin: März 2027. Der Druck liegt bei 1,3 bar.\n"
)
GARTEN = "# Garten\n\nDie Hecke wird im Frühling geschnitten, der Rasen im Mai vertikutiert.\n"
STEUER = "# Steuererklärung 2025\n\nAlle Belege für das Finanzamt liegen im grünen Ordner.\n"


@pytest.fixture
def german(owner, vault, make_source, embedder):
    vault.write("haus/heizung.md", HEIZUNG)
    vault.write("haus/garten.md", GARTEN)
    vault.write("papiere/steuer.md", STEUER)
    source = make_source(owner, vault)
    source_sync(source=source, embedder=embedder)
    return source


def test_the_multilingual_model_loads_offline_and_understands_german(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    model = get_embedder(MULTILINGUAL_MODEL)
    passages = model.embed_passages([HEIZUNG, GARTEN, STEUER])
    assert passages.shape == (3, 512)
    assert np.allclose(np.linalg.norm(passages, axis=1), 1.0, atol=1e-3)
    for question, best in (
        ("Wer wartet unsere Heizung?", 0),
        ("Wann schneiden wir die Hecke?", 1),
        ("Wo sind die Unterlagen fürs Finanzamt?", 2),
        ("who services the heating?", 0),  # across languages
    ):
        assert int(np.argmax(passages @ model.embed_query(question))) == best, question


def test_choosing_the_model_reindexes_in_the_worker_and_search_keeps_working(
    owner, german, admin, client, monkeypatch, django_capture_on_commit_callbacks
):
    seen_during: list[str] = []
    fill = reindex_module._fill

    def spying_fill(*args, **kwargs):
        # While the new generation fills, search still answers from the old one.
        seen_during.append(search(user=owner, query="Heizung Wartung").results[0].path)
        return fill(*args, **kwargs)

    monkeypatch.setattr(reindex_module, "_fill", spying_fill)
    before = index_state()
    client.force_login(admin)
    url = reverse("admin:instance_instancesettings_change", args=[instance_settings().pk])
    page = client.get(url)
    form = page.context["adminform"].form
    data = {k: v for k, v in form.initial.items() if v is not None and k != "default_model"}
    data |= {"embedding_model": MULTILINGUAL_MODEL, "reranker_api": "jina"}
    with django_capture_on_commit_callbacks(execute=True) as queued:
        response = client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:2000]
    assert len(queued) == 1  # the reindex job

    after = index_state()
    assert (after.model_name, after.dimension) == (MULTILINGUAL_MODEL, 512)
    assert after.generation == before.generation + 1
    assert seen_during and all(p == "haus/heizung.md" for p in seen_during)
    run = JobRun.objects.get(job="library_reindex")
    assert run.outcome == JobRun.Outcome.OK
    assert "re-embedded 3 passages with use-multilingual-v3" in run.summary
    jobs = client.get("/jobs/").content.decode()
    assert "library_reindex" in jobs

    # German questions with umlauts and a compound find the German note.
    for question in ("Wer macht die Heizungswartung?", "Herr Muller", "jahrliche Wartung"):
        assert search(user=owner, query=question).results[0].path == "haus/heizung.md", question
    assert search(user=owner, query="Steuer Belege").results[0].path == "papiere/steuer.md"
    assert search(user=owner, query="who services the heating").results[0].path == "haus/heizung.md"


def test_saving_the_same_model_queues_nothing(owner, german):
    settings_row = instance_settings()
    settings_row.embedding_model = "all-MiniLM-L6-v2-onnx-int8"
    settings_row.save()
    assert not JobRun.objects.filter(job="library_reindex").exists()
    assert index_state().generation == 1


def test_a_model_directory_that_is_not_one_is_refused_in_admin(admin, client, tmp_path):
    (tmp_path / "model").mkdir()
    row = InstanceSettings(embedding_model="directory", embedding_model_dir=str(tmp_path / "model"))
    with pytest.raises(Exception, match=r"has no model\.onnx"):
        row.full_clean(exclude=["default_model", "reranker_connection"])


def test_compounds_split_against_the_index(owner, german):
    from django.db import connection

    with connection.cursor() as cursor:
        assert compound_split("heizungswartung", cursor, {}) == ("heizung", "wartung")
        assert compound_split("gartenhecke", cursor, {}) == ("garten", "hecke")
        assert compound_split("zahnarzttermin", cursor, {}) is None  # parts not indexed
