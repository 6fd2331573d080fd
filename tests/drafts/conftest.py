"""Drafts fixtures: a drafts root of the test's own, and a draft of the owner's."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def drafts_root(tmp_path, settings):
    root = tmp_path / "drafts"
    settings.DRAFTS_ROOT = root
    return root


@pytest.fixture
def draft(owner):
    from apps.drafts.services import draft_create

    return draft_create(
        owner=owner, title="Letter to the insurer", filename="letter.md", content="Dear Sir,\n"
    )
