"""Fixtures for library tests: the fake arXiv server (tests/fakes/arxiv.py).

The vaults, sources and the counting embedder every folder uses are in
tests/support/fixtures.py."""

from tests.fakes.arxiv import fake_arxiv  # noqa: F401
