"""The embedding model: offline from PyPI packages, recorded in the database,
and a mismatch stops indexing and search until `manage.py reindex`."""

import subprocess
import sys
from io import StringIO

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from apps.library.index.embeddings import get_embedder
from apps.library.index.tables import IndexMismatch, index_state
from apps.library.ingest.sync import source_sync
from apps.library.models import IndexState
from apps.library.search import search


def test_the_default_model_loads_offline_and_embeds(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    embedder = get_embedder("all-MiniLM-L6-v2-onnx-int8")
    vectors = embedder.embed_passages(
        ["a cat sits on the mat", "a kitten rests on a rug", "tax form"]
    )
    assert vectors.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-3)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.2


def test_a_question_embeds_like_the_same_text_as_a_passage():
    """Questions go through their own one-thread session: it must be the same
    model, or a question would no longer find a passage that says it word for word."""
    embedder = get_embedder("all-MiniLM-L6-v2-onnx-int8")
    text = "when is the boiler service due"
    (passage,) = embedder.embed_passages([text])
    query = embedder.embed_query(text)
    assert float(query @ passage) > 0.9999
    assert float(query @ embedder.embed_query("tax form for the car")) < 0.9


def test_the_model_is_recorded(db):
    state = index_state()
    assert (state.model_name, state.dimension) == ("all-MiniLM-L6-v2-onnx-int8", 384)


@pytest.fixture
def indexed(owner, vault, make_source, embedder):
    vault.write("a.md", "# Boiler\n\nThe boiler service is due in November.\n")
    source = make_source(owner, vault)
    source_sync(source=source, embedder=embedder)
    return source


def test_a_model_mismatch_stops_search_and_sync_with_the_fix(owner, indexed, embedder):
    IndexState.objects.filter(pk=1).update(model_name="some-other-model")
    with pytest.raises(IndexMismatch, match=r"run `manage\.py reindex`"):
        search(user=owner, query="boiler")
    with pytest.raises(IndexMismatch, match=r"run `manage\.py reindex`"):
        source_sync(source=indexed, embedder=embedder)
    with pytest.raises(CommandError, match="reindex"):
        call_command("kb", "search", "--user", "olivia", "boiler", stdout=StringIO())


def test_reindex_swaps_in_a_fresh_generation_and_search_works_again(owner, indexed):
    IndexState.objects.filter(pk=1).update(model_name="some-other-model")
    out = StringIO()
    call_command("reindex", stdout=out)
    assert "reindexed 1 chunks" in out.getvalue()
    state = index_state()
    assert state.model_name == "all-MiniLM-L6-v2-onnx-int8"
    assert state.generation == 2
    assert state.reindexing_since is None
    assert search(user=owner, query="when is the boiler service due").results[0].path == "a.md"


def test_a_running_reindex_blocks_a_second_one_and_sync(owner, indexed, embedder):
    from django.utils import timezone

    IndexState.objects.filter(pk=1).update(reindexing_since=timezone.now())
    with pytest.raises(CommandError, match="running since"):
        call_command("reindex", stdout=StringIO())
    from apps.library.ingest.sync import SourceUnavailable

    with pytest.raises(SourceUnavailable, match="reindex is running"):
        source_sync(source=indexed, embedder=embedder)


def test_embedding_needs_neither_pytorch_nor_sentence_transformers():
    """The tokenizer package is installed without its declared PyTorch stack
    (docs/decisions.md): embedding for real must never import it."""
    script = (
        "import os, sys, django\n"
        "os.environ['DJANGO_SETTINGS_MODULE'] = 'tests.settings'\n"
        "django.setup()\n"
        "from apps.library.index.embeddings import get_embedder\n"
        "vector = get_embedder('all-MiniLM-L6-v2-onnx-int8').embed_query('where is the boiler manual')\n"
        "assert len(vector) == 384\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('torch', 'sentence_transformers', 'transformers')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"
