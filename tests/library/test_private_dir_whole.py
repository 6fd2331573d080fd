"""A private folder of "." (or "/") is the whole collection: every document is
owner-only and local-only, through the real `visible_to` selector and the real
cloud routing. A private folder that matches nothing is shown as such when it
is saved (it used to fail open silently)."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client

from apps.chats.models import Chat
from apps.chats.tools.context import LOCAL_ONLY_STOP, PrivacyStop, TurnContext
from apps.chats.tools.library import search_notes
from apps.library.ingest.sync import source_sync
from apps.library.models import Source
from apps.library.search import search
from apps.library.selectors import visible_to

pytestmark = pytest.mark.django_db

NOTES = {
    "plums.md": "# Plums\n\nThe Victoria plum by the shed gives fruit in August.\n",
    "garden/hedge.md": "# Hedge\n\nTrim the beech hedge in late August.\n",
    "deep/down/here/keys.md": "# Spare keys\n\nThe spare keys hang behind the boiler.\n",
}


def kb_sources_add(vault, *args: str) -> tuple[Source, str]:
    out, err = StringIO(), StringIO()
    call_command(
        "kb", "sources", "add", "--owner", "olivia", "--name", "Everything",
        "--path", str(vault.root), "--share", "household", "--cloud", "allowed",
        *args, stdout=out, stderr=err,
    )  # fmt: skip
    return Source.objects.get(pk=int(out.getvalue().split()[0])), err.getvalue()


@pytest.mark.parametrize("whole", [".", "/", "./"])
def test_a_private_dir_of_the_root_makes_every_document_owner_only_and_local_only(
    owner, member, vault, embedder, whole
):
    for path, text in NOTES.items():
        vault.write(path, text)
    source, notes = kb_sources_add(vault, "--private-dir", whole)
    assert "whole collection" in notes
    source_sync(source=source, embedder=embedder)

    documents = source.documents.all()
    assert documents.count() == 3
    assert all(d.in_private_dir for d in documents)
    # Shared with the household, yet no one else sees any of it...
    assert set(visible_to(owner)) == set(documents)
    assert not visible_to(member).exists()
    assert not search(user=member, query="spare keys boiler", embedder=embedder).results
    # ...and though the collection allows cloud models, none of it reaches one.
    assert search(user=owner, query="spare keys boiler", embedder=embedder).results
    assert not search(
        user=owner, query="spare keys boiler", cloud_only=True, embedder=embedder
    ).results
    chat = Chat.objects.create(owner=owner, title="cloud")
    cloud_turn = TurnContext(user=owner, chat=chat, cloud=True, notes_only=False)
    with pytest.raises(PrivacyStop) as stopped:
        search_notes(cloud_turn, {"query": "spare keys behind the boiler"})
    assert str(stopped.value) == LOCAL_ONLY_STOP


def test_the_owner_making_an_existing_collection_wholly_private_moves_every_document(
    owner, member, vault, make_source, embedder
):
    for path, text in NOTES.items():
        vault.write(path, text)
    source = make_source(owner, vault, sharing="household", cloud="allowed")
    source_sync(source=source, embedder=embedder)
    assert visible_to(member).count() == 3
    client = Client()
    client.force_login(owner)
    prefix = f"c{source.pk}"
    response = client.post(
        f"/library/collections/{source.pk}/",
        {
            f"{prefix}-sharing": "household",
            f"{prefix}-cloud": "allowed",
            f"{prefix}-private_dirs": ".",
            f"{prefix}-describe_images": "",
        },
        follow=True,
    )
    assert "whole collection" in response.content.decode()
    assert not visible_to(member).exists()
    assert not search(user=owner, query="plum", cloud_only=True, embedder=embedder).results


def test_a_private_dir_that_matches_no_folder_is_reported_when_saved(owner, vault):
    vault.write("private/diary.md", "# Diary\n\nDear diary.\n")
    _, notes = kb_sources_add(vault, "--private-dir", "privat", "--private-dir", "private")
    assert "private folder 'privat' matches no folder" in notes
    assert "'private' matches" not in notes
