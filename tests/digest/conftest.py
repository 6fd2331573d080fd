"""Digest fixtures: a week of papers on the fake arXiv and the fake bioRxiv, a
fake scoring model that scores by title, and a person whose digest is set up.

The clock is frozen at NOW (a Monday, 07:05 UTC): fixture papers are dated
relative to it, and the pipeline and the schedule are given it explicitly.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from django.contrib.auth.models import Group, Permission

from apps.accounts import permissions
from apps.digest import biorxiv
from apps.library.ingest import arxiv
from tests.fakes.arxiv import FakeArxiv, FakePaper
from tests.fakes.biorxiv import FakeBiorxiv, FakePreprint
from tests.fakes.llm import FakeOpenAI, Reply

NOW = datetime(2026, 3, 2, 7, 5, tzinfo=UTC)  # Monday; the default slot is Monday 07:00
TODAY = NOW.date()


def days_ago(n: int) -> datetime:
    return NOW - timedelta(days=n, hours=3)


# Scores the fake model gives, by a word in the title (first match wins); 5 otherwise.
SCORES = {
    "Cytometry Foundation": 9.5,  # must read (arXiv: full text)
    "Spatial Atlas": 9.2,  # must read (bioRxiv: no PDF, summary with a warning)
    "Sparse Gating": 8.4,  # worth reading (summary entry)
    "Single-Cell Tokens": 8.0,  # worth reading (bioRxiv summary entry)
    "Noise": 3.0,
}

ARXIV_PAPERS = [
    FakePaper(
        id="2602.10001",
        title="A Cytometry Foundation Model for Every Panel",
        authors=["Ada Lovelace", "Grace Hopper"],
        abstract="We pretrain a foundation model on forty million cytometry events.",
        published=days_ago(1),
        categories=["cs.LG", "q-bio.QM"],
    ),
    FakePaper(
        id="2602.10002",
        title="Sparse Gating for Mixture Models",
        authors=["Alan Turing"],
        abstract="Sparse gating makes mixtures cheaper with no loss of accuracy.",
        published=days_ago(2),
        categories=["cs.LG"],
    ),
    FakePaper(
        id="2602.10003",
        title="Noise in Benchmarks, Revisited",
        authors=["Edsger Dijkstra"],
        abstract="Benchmarks are noisy; we measure how noisy.",
        published=days_ago(3),
        categories=["cs.LG", "cs.CL"],  # listed in both categories: one entry
    ),
    FakePaper(
        id="2602.10004",
        title="Learning Rates for the Impatient",
        authors=["Barbara Liskov"],
        abstract="A schedule that warms up in ten steps.",
        published=days_ago(4),
        categories=["cs.LG"],
        doi="10.1101/2026.02.20.000777",  # the same paper as a bioRxiv preprint (by DOI)
    ),
    FakePaper(
        id="2602.10005",
        title="Already Read: Attention Over Receipts",
        authors=["Katherine Johnson"],
        abstract="This one is in the library already.",
        published=days_ago(2),
        categories=["cs.CL"],
    ),
    FakePaper(
        id="2601.09999",
        title="An Old Paper From Last Month",
        authors=["John von Neumann"],
        abstract="Outside the week: never fetched into the digest.",
        published=days_ago(20),
        categories=["cs.LG"],
    ),
]

BIORXIV_PREPRINTS = [
    FakePreprint(
        doi="10.1101/2026.02.27.000001",
        title="A Spatial Atlas of the Developing Gut",
        authors=["Rosalind Franklin", "Barbara McClintock"],
        abstract="Spatial transcriptomics of 200 sections.",
        posted=TODAY - timedelta(days=3),
        category="bioinformatics",
    ),
    FakePreprint(
        doi="10.1101/2026.02.26.000002",
        title="Single-Cell Tokens for Transformers",
        authors=["Dorothy Hodgkin"],
        abstract="We tokenise single-cell profiles; cytometry data works too.",
        posted=TODAY - timedelta(days=4),
        category="bioinformatics",
    ),
    FakePreprint(  # a later version of the same DOI in the same week: listed once
        doi="10.1101/2026.02.26.000002",
        title="Single-Cell Tokens for Transformers",
        authors=["Dorothy Hodgkin"],
        abstract="We tokenise single-cell profiles; cytometry data works too (v2).",
        posted=TODAY - timedelta(days=1),
        category="bioinformatics",
        version=2,
    ),
    FakePreprint(  # same title as an arXiv paper: removed as a duplicate
        doi="10.1101/2026.02.25.000003",
        title="Sparse gating for mixture models",
        authors=["Alan Turing"],
        abstract="Cross-posted.",
        posted=TODAY - timedelta(days=5),
        category="bioinformatics",
    ),
    FakePreprint(  # same DOI as the arXiv learning-rate paper
        doi="10.1101/2026.02.20.000777",
        title="Learning rates for the impatient (preprint)",
        authors=["Barbara Liskov"],
        abstract="Also on arXiv.",
        posted=TODAY - timedelta(days=6),
        category="bioinformatics",
    ),
    FakePreprint(  # found only by keyword
        doi="10.1101/2026.02.28.000004",
        title="Flow Panels Without Compensation",
        authors=["Mary Anning"],
        abstract="A cytometry protocol that skips compensation.",
        posted=TODAY - timedelta(days=2),
        category="immunology",
    ),
    FakePreprint(  # outside the week
        doi="10.1101/2026.01.01.000009",
        title="An Old Cytometry Preprint",
        authors=["Old Author"],
        abstract="cytometry from January.",
        posted=TODAY - timedelta(days=40),
        category="bioinformatics",
    ),
]


def score_for(title: str) -> float:
    for word, score in SCORES.items():
        if word.lower() in title.lower():
            return score
    return 5.0


def papers_in(request_json: dict) -> list[dict]:
    """The papers a scoring request asked about (from its first user message)."""
    for message in request_json["messages"]:
        if message["role"] == "user" and "JSON data:" in (message["content"] or ""):
            return json.loads(message["content"].split("JSON data:\n", 1)[1])
    raise AssertionError("no papers in the request")


def scorer(request_json: dict) -> Reply:
    """A well-behaved scoring model."""
    answer = {
        "papers": [
            {
                "id": p["id"],
                "score": score_for(p["title"]),
                "track": "cytometry" if "ytometry" in p["abstract"] else "methods",
                "summary": f"Summary of {p['title']}.",
                "why": f"Because of {p['title'].split()[0]}.",
            }
            for p in papers_in(request_json)
        ]
    }
    return Reply(text=json.dumps(answer))


def titles_in(request_json: dict) -> list[str]:
    return [p["title"] for p in papers_in(request_json)]


class QuickEmbedder:
    """A stand-in for the embedding model (same name and dimension): a vector
    from a hash of the text. These tests check what reaches the library, not
    how well it is found, and the real model would be most of their runtime;
    the end-to-end test keeps the real one (`real_embedder`)."""

    def __init__(self) -> None:
        from django.conf import settings

        from apps.library.index.embeddings import model_spec

        spec = model_spec(settings.EMBEDDING_MODEL)
        self.name, self.dimension = spec.name, spec.dimension

    def _vector(self, text: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
        vector = np.random.default_rng(seed).standard_normal(self.dimension).astype(np.float32)
        return vector / np.linalg.norm(vector)

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([self._vector(t) for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        return self._vector(text)


@pytest.fixture(autouse=True)
def _quick_embedder(request):
    from apps.library.index import embeddings

    if "real_embedder" in request.fixturenames:
        yield
        return
    previous = embeddings._override
    embeddings.set_embedder(QuickEmbedder())
    yield
    embeddings.set_embedder(previous)


@pytest.fixture
def real_embedder():
    """Ask for it to run a test with the real embedding model."""


@pytest.fixture(autouse=True)
def _own_data_dir(settings, tmp_path):
    # Digest files and stored papers land in the data dir: each test gets its own,
    # so file names (digest-DATE.md, then -2, -3…) do not depend on test order.
    settings.DATA_DIR = tmp_path / "data"
    settings.DATA_DIR.mkdir()


@pytest.fixture(autouse=True)
def _quick_retries(monkeypatch, settings):
    monkeypatch.setattr(arxiv, "RETRY_BACKOFF_SECONDS", 0.0)
    monkeypatch.setattr(biorxiv, "RETRY_BACKOFF_SECONDS", 0.0)
    settings.ARXIV_DELAY_SECONDS = 0


@pytest.fixture
def fake_arxiv(settings):
    with FakeArxiv(papers=ARXIV_PAPERS) as fake:
        fake.configure(settings)
        yield fake


@pytest.fixture
def fake_biorxiv(settings):
    with FakeBiorxiv(BIORXIV_PREPRINTS, page_size=2) as fake:
        fake.configure(settings)
        yield fake


@pytest.fixture
def llm():
    with FakeOpenAI(default=scorer) as fake:
        yield fake


@pytest.fixture
def local_model(llm, db):
    from apps.instance.services import connection_create, model_add

    connection = connection_create(
        name="home", kind="openai", base_url=llm.base_url, location="local"
    )
    return model_add(connection=connection, model_id="scorer-7b", context_length=32768)


@pytest.fixture
def cloud_model(llm, db):
    from apps.instance.services import connection_create, model_add

    connection = connection_create(
        name="cloud", kind="openai", base_url=llm.base_url, location="cloud", api_key="sk-x-123456"
    )
    return model_add(connection=connection, model_id="big")


def grant(user, *flags):
    group, _ = Group.objects.get_or_create(name="+".join(permissions.codename(f) for f in flags))
    group.permissions.add(
        *Permission.objects.filter(codename__in=[permissions.codename(f) for f in flags])
    )
    user.groups.add(group)
    return type(user).objects.get(pk=user.pk)  # a fresh object: permission caches are per object


@pytest.fixture
def digest_on(db):
    from apps.digest.services import digest_instance_enable

    return digest_instance_enable(enabled=True)


@pytest.fixture
def reader(owner, local_model, digest_on):
    """The owner, allowed to run the digest, with a digest set up."""
    from apps.digest.services import digest_configure

    user = grant(owner, permissions.RUN_PAPER_DIGEST)
    digest_configure(
        user=user,
        enabled=True,
        arxiv=["cs.LG:10", "cs.CL:10"],
        biorxiv=["bioinformatics:10"],
        keywords=["cytometry:5"],
        model_label=local_model.label,
        research_context="I build cytometry foundation models.",
    )
    return user


def library_titles(user) -> dict[str, str]:
    """title → kind of everything in the person's own library."""
    from apps.library.models import Document

    return {d.title: d.kind for d in Document.objects.filter(source__owner=user)}


def normalised(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()
