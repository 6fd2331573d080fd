"""Reads scoped to a person: a draft, snapshot or proposal of someone else
does not exist for you (404)."""

from __future__ import annotations

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from apps.chats.models import Chat
from apps.chats.selectors import chats_for
from apps.drafts.models import Draft, Proposal, Snapshot


def drafts_for(*, user) -> QuerySet[Draft]:
    return Draft.objects.filter(owner=user).order_by("-updated_at", "-id")


def draft_for(*, user, pk: int) -> Draft:
    return get_object_or_404(drafts_for(user=user), pk=pk)


def snapshot_for(*, user, draft: Draft, pk: int) -> Snapshot:
    return get_object_or_404(Snapshot.objects.filter(draft__owner=user, draft=draft), pk=pk)


def proposal_for(*, user, draft: Draft, pk: int) -> Proposal:
    return get_object_or_404(Proposal.objects.filter(draft__owner=user, draft=draft), pk=pk)


def pending_proposals_for(*, draft: Draft, filename: str | None = None) -> QuerySet[Proposal]:
    proposals = draft.proposals.filter(status=Proposal.Status.PENDING)
    if filename is not None:
        proposals = proposals.filter(filename=filename)
    return proposals.order_by("created_at", "id")


def snapshots_for(*, draft: Draft, filename: str) -> QuerySet[Snapshot]:
    return draft.snapshots.filter(filename=filename).order_by("-created_at", "-id")


def draft_chat_for(*, user, draft: Draft) -> Chat | None:
    """The chat the editor's panel continues: the draft's chat, if it is the person's."""
    return chats_for(user=user).filter(pk=draft.chat_id).first() if draft.chat_id else None


def open_file_note_for(*, draft: Draft, filename) -> str:
    """The line that tells the model which draft and file the person has open."""
    name = filename if isinstance(filename, str) and filename else draft.main_file
    return (
        f"The person has draft {draft.pk} “{draft.title}”, file {name}, open in the editor. "
        "Read it with read_draft; suggest changes with propose_draft_edit."
    )
