"""Writing drafts: saves that name their version, snapshots before every
write, proposals applied hunk by hunk, and the retention sweep."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.core.errors import AlreadyExists, Conflict, Refused
from apps.drafts import sandbox, services
from apps.drafts.models import Draft, Proposal

pytestmark = pytest.mark.django_db


def read(draft, name=None):
    return sandbox.read_text(draft.owner_id, draft.key, name or draft.main_file)


def test_creating_writes_the_file_in_the_owners_folder(draft, drafts_root, owner):
    assert read(draft) == "Dear Sir,\n"
    assert (drafts_root / str(owner.pk) / draft.key / "letter.md").is_file()
    assert draft.title == "Letter to the insurer" and not draft.private


def test_a_draft_from_a_private_chat_is_private(owner):
    from apps.chats.models import Chat

    chat = Chat.objects.create(owner=owner, private=True)
    made = services.draft_create(owner=owner, title="", filename="cv.tex", chat=chat)
    assert made.private and made.title == "cv"


def test_a_refused_name_leaves_nothing_behind(owner, drafts_root):
    with pytest.raises(Refused):
        services.draft_create(owner=owner, title="x", filename="../evil.md")
    assert not Draft.objects.exists()
    assert not drafts_root.exists() or not any(drafts_root.rglob("*.md"))


def test_adding_an_existing_file_is_refused(draft):
    services.draft_add_file(draft=draft, filename="refs.bib", content="@book{}")
    with pytest.raises(AlreadyExists):
        services.draft_add_file(draft=draft, filename="refs.bib", content="other")
    assert read(draft, "refs.bib") == "@book{}"


def test_saving_snapshots_the_previous_text(draft):
    loaded = sandbox.file_hash(read(draft))
    new_hash = services.draft_save(
        draft=draft, filename="letter.md", text="Dear Madam,\n", expect_hash=loaded
    )
    assert read(draft) == "Dear Madam,\n" and new_hash == sandbox.file_hash("Dear Madam,\n")
    (snapshot,) = draft.snapshots.all()
    assert snapshot.text == "Dear Sir,\n" and snapshot.reason == "save"


def test_it_does_not_write_when_the_file_moved_underneath(draft):
    stale = sandbox.file_hash(read(draft))
    sandbox.write_text(draft.owner_id, draft.key, "letter.md", "changed elsewhere")
    with pytest.raises(Conflict):
        services.draft_save(draft=draft, filename="letter.md", text="mine", expect_hash=stale)
    assert read(draft) == "changed elsewhere"  # nothing lost
    assert not draft.snapshots.exists()


def test_restoring_snapshots_the_current_text_first(draft):
    services.draft_save(
        draft=draft, filename="letter.md", text="v2\n", expect_hash=sandbox.file_hash(read(draft))
    )
    original = draft.snapshots.get()
    services.snapshot_restore(draft=draft, snapshot=original)
    assert read(draft) == "Dear Sir,\n"
    assert [s.text for s in draft.snapshots.order_by("pk")] == ["Dear Sir,\n", "v2\n"]


def test_only_the_newest_snapshots_are_kept(draft, settings):
    settings.DRAFTS_SNAPSHOTS_KEPT = 3
    for n in range(6):
        services.draft_save(
            draft=draft,
            filename="letter.md",
            text=f"v{n}",
            expect_hash=sandbox.file_hash(read(draft)),
        )
    # Six saves snapshot the original and v0..v4; the newest three remain.
    assert [s.text for s in draft.snapshots.order_by("pk")] == ["v2", "v3", "v4"]


LETTER = "".join(f"line {i}\n" for i in range(30))


@pytest.fixture
def long_draft(owner):
    return services.draft_create(owner=owner, title="Long", filename="long.md", content=LETTER)


def test_a_proposal_writes_nothing_until_applied(long_draft):
    new = LETTER.replace("line 2\n", "line two\n").replace("line 25\n", "")
    proposal = services.proposal_create(draft=long_draft, filename="long.md", new_text=new)
    assert [h["kind"] for h in proposal.hunks] == ["replace", "remove"]
    assert read(long_draft) == LETTER
    services.proposal_apply(proposal=proposal, accepted=[0])
    assert read(long_draft) == LETTER.replace("line 2\n", "line two\n")
    assert long_draft.snapshots.get().text == LETTER
    proposal.refresh_from_db()
    assert proposal.status == Proposal.Status.APPLIED and proposal.accepted == [0]
    with pytest.raises(Conflict, match="already"):
        services.proposal_apply(proposal=proposal, accepted=[1])


def test_a_proposal_for_a_file_that_changed_since_is_a_conflict(long_draft):
    proposal = services.proposal_create(
        draft=long_draft, filename="long.md", new_text=LETTER + "more\n"
    )
    services.draft_save(
        draft=long_draft,
        filename="long.md",
        text="rewritten\n",
        expect_hash=sandbox.file_hash(LETTER),
    )
    with pytest.raises(Conflict, match="nothing was written"):
        services.proposal_apply(proposal=proposal, accepted=[0])
    assert read(long_draft) == "rewritten\n"


def test_rejecting_every_hunk_discards_without_writing(long_draft):
    proposal = services.proposal_create(draft=long_draft, filename="long.md", new_text="x\n")
    assert services.proposal_apply(proposal=proposal, accepted=[]) is None
    proposal.refresh_from_db()
    assert proposal.status == Proposal.Status.DISCARDED
    assert read(long_draft) == LETTER and not long_draft.snapshots.exists()


def test_an_unchanged_proposal_is_refused(long_draft):
    with pytest.raises(Refused, match="nothing to review"):
        services.proposal_create(draft=long_draft, filename="long.md", new_text=LETTER)


def test_retention_removes_untouched_drafts_except_kept_ones(owner, drafts_root):
    old = services.draft_create(owner=owner, title="Old", filename="a.md")
    kept = services.draft_create(owner=owner, title="Kept", filename="b.md")
    fresh = services.draft_create(owner=owner, title="Fresh", filename="c.md")
    services.draft_update(draft=kept, keep=True)
    Draft.objects.filter(pk__in=[old.pk, kept.pk]).update(
        updated_at=timezone.now() - timedelta(days=40)
    )
    assert services.drafts_prune(days=30) == ["Old"]
    assert set(Draft.objects.values_list("title", flat=True)) == {"Kept", "Fresh"}
    assert not (drafts_root / str(owner.pk) / old.key).exists()
    assert (drafts_root / str(owner.pk) / fresh.key / "c.md").exists()
    assert services.drafts_prune(days=0) == []
