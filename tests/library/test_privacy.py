"""Who may read what, enforced in both search legs: owner-only sources and
private folders never reach another person, local-only content never reaches a
cloud-only search, and a note cannot reclassify itself."""

import pytest
from django.contrib.auth.models import Group

from apps.library.index.tables import index_state
from apps.library.ingest.sync import source_sync
from apps.library.models import Document, Source
from apps.library.search import Filters, search
from apps.library.search.legs import keyword_leg, vector_leg
from apps.library.selectors import get_document_for, visible_pools, visible_to

SECRET = "Marker zebracorn-4417 lives in the private note about the quince orchard."
SHARED = "The household shopping plan mentions oat milk and the quince orchard."


@pytest.fixture
def shared_vault(owner, vault, make_source, embedder):
    """The owner's vault shared with the household, with a private/ folder."""
    vault.write("shopping.md", f"# Shopping\n\n{SHARED}\n")
    vault.write("private/diary.md", f"# Diary\n\n{SECRET}\n")
    source = make_source(owner, vault, sharing=Source.Sharing.HOUSEHOLD, cloud=Source.Cloud.ALLOWED)
    source_sync(source=source, embedder=embedder)
    return source


def texts(user, query, **options):
    return [r.text for r in search(user=user, query=query, limit=20, **options).results]


def both_legs(user, query, **pool_options):
    """Chunk texts each leg returns for `user`, asked directly (not only fused)."""
    from apps.library.index.embeddings import get_embedder
    from apps.library.models import Chunk

    pools = visible_pools(user, **pool_options)
    if not pools:
        return [], []
    state = index_state()
    vector = get_embedder().embed_query(query)
    keyword = keyword_leg(query, pools, Filters(), False)
    semantic = vector_leg(vector, pools, Filters(), False, state)
    by_id = dict(Chunk.objects.filter(id__in=keyword + semantic).values_list("id", "text"))
    return [by_id[i] for i in keyword], [by_id[i] for i in semantic]


def test_the_owner_finds_their_private_note(owner, shared_vault):
    assert any("zebracorn-4417" in t for t in texts(owner, "zebracorn-4417 quince orchard"))


def test_a_household_member_never_gets_a_private_folder_chunk_from_either_leg(member, shared_vault):
    keyword, semantic = both_legs(member, SECRET)
    assert any("oat milk" in t for t in keyword + semantic)  # the shared note is there
    assert not any("zebracorn" in t for t in keyword + semantic)
    assert not any("zebracorn" in t for t in texts(member, SECRET))


def test_an_outsider_sees_nothing_of_a_household_source(outsider, shared_vault):
    assert texts(outsider, "quince orchard oat milk") == []
    assert both_legs(outsider, "quince orchard") == ([], [])


def test_an_owner_only_source_is_invisible_to_the_household(
    owner, member, make_vault, make_source, embedder
):
    notes = make_vault("olivia-own")
    notes.write("plans.md", "# Plans\n\nSurprise party for Max at the boathouse.\n")
    source_sync(source=make_source(owner, notes, name="own"), embedder=embedder)
    keyword, semantic = both_legs(member, "surprise party boathouse")
    assert keyword == [] and semantic == []
    assert texts(owner, "surprise party boathouse")


def test_group_sharing_reaches_the_group_only(
    owner, member, outsider, make_vault, make_source, embedder
):
    book = Group.objects.create(name="book club")
    outsider.groups.add(book)
    notes = make_vault("book")
    notes.write("reading.md", "# Reading\n\nNext book: The Left Hand of Darkness.\n")
    source_sync(
        source=make_source(owner, notes, name="club", groups=["book club"]), embedder=embedder
    )
    assert texts(outsider, "Left Hand of Darkness")
    assert texts(member, "Left Hand of Darkness") == []


def test_cloud_only_never_returns_local_only_chunks(
    owner, vault, make_vault, make_source, embedder
):
    vault.write("tax.md", "# Tax\n\nThe accountant is Ms Okafor, appointment in March.\n")
    local = make_source(owner, vault, name="local")  # folders start local-only
    source_sync(source=local, embedder=embedder)
    cloudy = make_vault("cloudy")
    cloudy.write("recipes.md", "# Recipes\n\nMs Okafor's lentil soup recipe.\n")
    source_sync(source=make_source(owner, cloudy, name="cloud", cloud="allowed"), embedder=embedder)
    results = search(user=owner, query="Ms Okafor appointment", cloud_only=True, limit=20).results
    assert results and all(r.cloud == "allowed" for r in results)
    assert not any("accountant" in r.text for r in results)
    keyword, semantic = both_legs(owner, "accountant Okafor appointment March", cloud_only=True)
    assert not any("accountant" in t for t in keyword + semantic)


def test_a_private_folder_is_local_only_even_in_a_cloud_allowed_source(owner, shared_vault):
    results = search(user=owner, query=SECRET, cloud_only=True, limit=20).results
    assert not any("zebracorn" in r.text for r in results)


def test_frontmatter_cannot_share_or_reclassify_a_note(
    owner, member, make_vault, make_source, embedder
):
    notes = make_vault("sneaky")
    notes.write(
        "sneaky.md",
        "---\nsharing: household\ncloud: allowed\nowner: max\nkind: paper\nvisibility: public\n---\n"
        "# Sneaky\n\nThe safe combination is 31-7-22.\n",
    )
    source = make_source(owner, notes, name="sneaky")
    source_sync(source=source, embedder=embedder)
    document = Document.objects.get(source=source)
    assert document.extra["x_sharing"] == "household"
    assert document.extra["x_owner"] == "max"
    assert document.kind == "note"
    assert texts(member, "safe combination 31-7-22") == []
    assert texts(owner, "safe combination", cloud_only=True) == []


def test_sharing_changes_apply_on_the_next_search_without_re_embedding(
    owner, member, vault, make_source, embedder
):
    vault.write("garden.md", "# Garden\n\nPlant the tulip bulbs in October.\n")
    source = make_source(owner, vault)
    source_sync(source=source, embedder=embedder)
    assert texts(member, "tulip bulbs") == []
    before = embedder.passages
    source.sharing = Source.Sharing.HOUSEHOLD
    source.save()
    assert texts(member, "tulip bulbs")
    assert embedder.passages == before


def test_superusers_do_not_read_other_peoples_private_notes(admin, owner, shared_vault):
    assert not any("zebracorn" in t for t in texts(admin, SECRET))
    private = Document.objects.get(path="private/diary.md")
    assert not visible_to(admin).filter(pk=private.pk).exists()


def test_a_private_document_is_a_404_for_everyone_else(member, outsider, shared_vault):
    from django.http import Http404

    private = Document.objects.get(path="private/diary.md")
    for person in (member, outsider):
        with pytest.raises(Http404):
            get_document_for(person, private.pk)


def test_a_disabled_account_sees_nothing(owner, shared_vault):
    owner.is_active = False
    owner.save()
    assert texts(owner, "quince orchard") == []
