"""`manage.py seed_demo`: the household `make run` creates, with demo vaults
a newcomer can search at once."""

from io import StringIO

import pytest
from django.core.management import call_command

from apps.accounts.models import User
from apps.library.models import Document, Source
from apps.library.search import search


@pytest.fixture
def seeded(db, settings, tmp_path):
    settings.VAULTS_ROOT = tmp_path / "vaults"
    out = StringIO()
    call_command("seed_demo", stdout=out)
    return out.getvalue()


def test_it_creates_an_admin_and_two_members_and_prints_passwords_once(seeded):
    assert "shown only once" in seeded
    assert set(User.objects.values_list("username", flat=True)) == {"admin", "alice", "bob"}
    assert User.objects.get(username="admin").is_superuser
    again = StringIO()
    call_command("seed_demo", stdout=again)
    assert "already exists" in again.getvalue()
    assert "password" not in again.getvalue().split("already exists")[0]
    assert Source.objects.filter(name="Demo vault").count() == 2


def test_each_member_gets_a_synced_vault_with_versions_records_private_notes_and_a_pdf(seeded):
    for name in ("alice", "bob"):
        documents = Document.objects.filter(source__owner__username=name, status="ready")
        assert documents.filter(in_private_dir=True).exists()
        assert documents.exclude(category="").exists()
        assert documents.filter(is_latest=False).exists()  # an older version
        assert documents.filter(kind="pdf", chunks__annotation="highlight").exists()


def test_a_newcomer_can_search_at_once_and_privacy_holds(seeded):
    alice, bob = User.objects.get(username="alice"), User.objects.get(username="bob")
    top = search(user=alice, query="when is the boiler service due now", limit=3).results[0]
    assert top.path == "home/boiler_service_2026-10.md"
    highlight = search(user=bob, query="radiator flow temperature heat pump", limit=5).results
    assert any(r.annotation == "highlight" for r in highlight)  # Alice shares with the household
    assert not any(
        "Physio" in r.text for r in search(user=bob, query="physio knee exercises").results
    )
    assert not any(
        "Gift" in r.title for r in search(user=alice, query="birthday gift ideas").results
    )


def test_the_demo_shows_both_cloud_policies(seeded):
    # Shared notes are cloud-allowed, so a cloud model is usable on the demo;
    # each person's private/ folder stays local-only.
    demo = Source.objects.filter(name="Demo vault")
    assert set(demo.values_list("cloud", flat=True)) == {Source.Cloud.ALLOWED}
    alice = User.objects.get(username="alice")
    cloud = search(user=alice, query="boiler service due", cloud_only=True).results
    assert cloud and all(not r.private for r in cloud)
    assert not any(
        "Physio" in r.text for r in search(user=alice, query="physio knee", cloud_only=True).results
    )
