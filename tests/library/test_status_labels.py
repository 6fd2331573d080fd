"""Private and owner labels wherever documents are listed: the library table
and the search results say which notes are private, and someone else's
collection is named with its owner ("Demo vault · Olivia")."""

from __future__ import annotations

import pytest

from apps.library.ingest.sync import source_sync
from apps.library.models import Source
from tests.support.fixtures import signed_in

pytestmark = pytest.mark.django_db

WORD = "quincemarmalade"


@pytest.fixture
def vaults(owner, member, make_vault, make_source, embedder):
    """Olivia's "Demo vault", shared with the household, with a private/ folder;
    Max's own vault, also called "Demo vault"."""
    hers = make_vault("olivia")
    hers.write("private/health.md", f"# Health\n\nPhysio on Tuesdays, {WORD} after.\n")
    hers.write("pantry.md", f"# Pantry\n\nThe {WORD} jars are on the top shelf.\n")
    source = make_source(owner, hers, name="Demo vault", sharing=Source.Sharing.HOUSEHOLD)
    source_sync(source=source, embedder=embedder)
    his = make_vault("max")
    his.write("shopping.md", f"# Shopping\n\nBuy {WORD} for Sunday.\n")
    source_sync(source=make_source(member, his, name="Demo vault"), embedder=embedder)


def row_of(html: str, path: str) -> str:
    return html.split(path)[0].rsplit("<tr>", 1)[1] + html.split(path)[1].split("</tr>")[0]


def passage_of(html: str, path: str) -> str:
    return html.split(path)[0].rsplit('data-testid="passage"', 1)[1].split("</li>")[0]


def test_a_private_note_has_a_private_badge_in_the_library_table(owner, vaults):
    html = signed_in(owner).get("/library/").content.decode()
    assert 'data-testid="private-badge"' in row_of(html, "private/health.md")
    assert 'data-testid="private-badge"' not in row_of(html, "pantry.md")


def test_a_private_note_has_a_private_badge_in_search_results(owner, vaults):
    html = signed_in(owner).get("/library/", {"q": WORD}).content.decode()
    assert "private/health.md" in html
    assert 'data-testid="private-badge"' in passage_of(html, "private/health.md")
    assert 'data-testid="private-badge"' not in passage_of(html, "pantry.md")


def test_someone_elses_collection_is_named_with_its_owner(member, vaults):
    html = signed_in(member).get("/library/", {"q": WORD}).content.decode()
    hers, his = passage_of(html, "pantry.md"), passage_of(html, "shopping.md")
    assert 'Demo vault · <span data-testid="collection-owner">Olivia</span>' in hers
    assert "collection-owner" not in his  # his own collection needs no owner
    assert "private/health.md" not in html  # and her private note stays hers

    table = signed_in(member).get("/library/").content.decode()
    assert 'data-testid="collection-owner">Olivia<' in row_of(table, "pantry.md")
    assert "collection-owner" not in row_of(table, "shopping.md")
