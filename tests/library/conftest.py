"""Fixtures for library tests: a vault folder under a throwaway vaults root,
registered sources for the personas, and an embedder that counts its work.

The real embedding model is used throughout (it loads offline in a fraction
of a second and embeds a test vault in about a second)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from apps.library.index.embeddings import get_embedder
from apps.library.services.sources import source_register


class Operator:
    """Registers folders the way the CLI operator does (every permission)."""

    def has_perm(self, perm: str) -> bool:
        return True


class Vault:
    """A folder of notes a test writes into (relative paths, UTF-8 text)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def write(self, rel: str, text: str, *, mtime: float | None = None) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        if mtime is not None:
            os.utime(path, (mtime, mtime))
        return path

    def write_bytes(self, rel: str, data: bytes) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return path

    def remove(self, rel: str) -> None:
        (self.root / rel).unlink()

    def rename(self, old: str, new: str) -> None:
        target = self.root / new
        target.parent.mkdir(parents=True, exist_ok=True)
        (self.root / old).rename(target)


class CountingEmbedder:
    """The real embedder, counting how many passages it was asked to embed."""

    def __init__(self) -> None:
        self.inner = get_embedder()
        self.name = self.inner.name
        self.dimension = self.inner.dimension
        self.passages = 0
        self.queries = 0

    def embed_passages(self, texts):
        self.passages += len(texts)
        return self.inner.embed_passages(texts)

    def embed_query(self, text):
        self.queries += 1
        return self.inner.embed_query(text)


@pytest.fixture
def vaults_root(tmp_path, settings) -> Path:
    root = tmp_path / "vaults"
    root.mkdir()
    settings.VAULTS_ROOT = root
    return root


@pytest.fixture
def make_vault(vaults_root):
    def make(name: str) -> Vault:
        folder = vaults_root / name
        folder.mkdir(parents=True, exist_ok=True)
        return Vault(folder)

    return make


@pytest.fixture
def vault(make_vault) -> Vault:
    """The owner's vault folder (empty; register it with `make_source`)."""
    return make_vault("olivia")


@pytest.fixture
def make_source():
    def make(owner, vault: Vault, *, name: str | None = None, **options):
        return source_register(
            actor=Operator(),
            owner=owner,
            name=name or f"{owner.username} vault",
            path=str(vault.root),
            **options,
        )

    return make


@pytest.fixture
def embedder() -> CountingEmbedder:
    return CountingEmbedder()


# The fake arXiv server as a fixture for library tests (tests/fakes/arxiv.py).
from tests.fakes.arxiv import fake_arxiv  # noqa: E402, F401
