"""Drafts: the only write path. Every file operation goes through the sandbox
(`apps.drafts.sandbox`); every write snapshots the text it replaces first.

Creating is a direct write (nothing existed to lose). Changing an existing
file is either the person's own save, which must name the version it edited
(`expect_hash`), or an accepted proposal, which re-checks that the file is
still the one the proposal was made against.
"""

from __future__ import annotations

import logging
import threading
from collections import defaultdict
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from apps.core.errors import AlreadyExists, Conflict, Refused
from apps.drafts import realtime, sandbox
from apps.drafts.hunks import Hunk, apply_hunks, diff_hunks
from apps.drafts.models import Draft, Proposal, Snapshot

logger = logging.getLogger(__name__)

TITLE_MAX = 200

# Two saves of one file at once (two tabs, a save racing an accepted
# proposal) must not both pass the hash check: writes to a draft take its lock.
# One web process writes drafts (DESIGN.md), so a process-local lock suffices.
_locks: defaultdict[str, threading.Lock] = defaultdict(threading.Lock)


def _clean_title(title: str, fallback: str) -> str:
    title = " ".join((title or "").split()) or fallback
    if len(title) > TITLE_MAX:
        raise Refused(f"A title can be at most {TITLE_MAX} characters.")
    return title


def _touch(draft: Draft) -> None:
    draft.updated_at = timezone.now()
    draft.save(update_fields=["updated_at"])


def _snapshot(draft: Draft, filename: str, text: str, reason: str) -> Snapshot:
    snapshot = Snapshot.objects.create(
        draft=draft, filename=filename, text=text, sha256=sandbox.file_hash(text), reason=reason
    )
    # Keep the newest N per file: history is for undo, not an archive.
    stale = list(
        Snapshot.objects.filter(draft=draft, filename=filename)
        .order_by("-created_at", "-id")
        .values_list("pk", flat=True)[settings.DRAFTS_SNAPSHOTS_KEPT :]
    )
    if stale:
        Snapshot.objects.filter(pk__in=stale).delete()
    return snapshot


def draft_create(
    *, owner, title: str, filename: str, content: str = "", chat=None, private: bool = False
) -> Draft:
    """A new draft holding one file. Private if asked, or if the chat it came from is."""
    sandbox.check_filename(filename)
    title = _clean_title(title, filename.rsplit(".", 1)[0])
    key = sandbox.new_key()
    sandbox.create_folder(owner.pk, key)
    try:
        sandbox.write_text(owner.pk, key, filename, content)
        draft = Draft.objects.create(
            owner=owner,
            key=key,
            title=title,
            main_file=filename,
            chat=chat,
            private=private or bool(chat and chat.private),
        )
    except BaseException:
        sandbox.remove_folder(owner.pk, key)  # nothing half-made is left behind
        raise
    logger.info("draft %s created by %s (%s)", draft.pk, owner.username, filename)
    return draft


def draft_add_file(*, draft: Draft, filename: str, content: str = "") -> str:
    with _locks[draft.key]:
        if sandbox.exists(draft.owner_id, draft.key, filename):
            raise AlreadyExists(f"“{filename}” is already in this draft.")
        sandbox.write_text(draft.owner_id, draft.key, filename, content)
    _touch(draft)
    return filename


def draft_update(*, draft: Draft, title: str | None = None, keep: bool | None = None) -> Draft:
    fields = []
    if title is not None:
        draft.title = _clean_title(title, draft.title)
        fields.append("title")
    if keep is not None:
        draft.keep = keep
        fields.append("keep")
    if fields:
        draft.save(update_fields=fields)
    return draft


def draft_attach_chat(*, draft: Draft, chat) -> None:
    """Link the chat the editor's panel started to the draft. A private chat
    makes the draft private too (it may now hold text from local-only notes)."""
    draft.chat = chat
    draft.private = draft.private or chat.private
    draft.save(update_fields=["chat", "private"])


def draft_save(*, draft: Draft, filename: str, text: str, expect_hash: str) -> str:
    """The person's own save. Refused (Conflict) when the file is no longer the
    version they loaded; nothing is written then. Returns the new hash."""
    with _locks[draft.key]:
        current = sandbox.read_text(draft.owner_id, draft.key, filename)
        if sandbox.file_hash(current) != expect_hash:
            raise Conflict(
                f"“{filename}” changed since you opened it (another tab, or an accepted "
                "suggestion). Your text is still in the editor: copy it, reload, and merge."
            )
        if text == current:
            return expect_hash
        with transaction.atomic():
            _snapshot(draft, filename, current, Snapshot.Reason.SAVE)
            _touch(draft)
        sandbox.write_text(draft.owner_id, draft.key, filename, text)
    return sandbox.file_hash(text)


def snapshot_restore(*, draft: Draft, snapshot: Snapshot) -> str:
    """Put an earlier version back; the current text is snapshotted first, so a
    restore can itself be undone. Returns the new hash."""
    with _locks[draft.key]:
        current = sandbox.read_text(draft.owner_id, draft.key, snapshot.filename)
        with transaction.atomic():
            _snapshot(draft, snapshot.filename, current, Snapshot.Reason.RESTORE)
            _touch(draft)
        sandbox.write_text(draft.owner_id, draft.key, snapshot.filename, snapshot.text)
    return sandbox.file_hash(snapshot.text)


def proposal_create(*, draft: Draft, filename: str, new_text: str, chat=None) -> Proposal:
    """Hunks for changing an existing file into `new_text`. Writes no file."""
    current = sandbox.read_text(draft.owner_id, draft.key, filename)
    if len(new_text.encode("utf-8")) > settings.DRAFTS_MAX_FILE_BYTES:
        raise Refused(f"The proposed “{filename}” is larger than the file size limit.")
    hunks = diff_hunks(current, new_text)
    if not hunks:
        raise Refused(f"The proposed text is the same as “{filename}” now: nothing to review.")
    proposal = Proposal.objects.create(
        draft=draft,
        filename=filename,
        base_hash=sandbox.file_hash(current),
        base_text=current,
        new_text=new_text,
        hunks=[hunk.as_json() for hunk in hunks],
        chat=chat,
    )
    transaction.on_commit(
        lambda: realtime.notify(
            draft.pk, event="proposal", proposal_id=proposal.pk, filename=filename
        )
    )
    return proposal


def proposal_hunks(proposal: Proposal) -> list[Hunk]:
    return [Hunk.from_json(data) for data in proposal.hunks]


def proposal_apply(*, proposal: Proposal, accepted: list[int]) -> str | None:
    """Write the accepted hunks (only those) into the file. Conflict, with
    nothing written, if the file changed since the proposal was made or the
    proposal was already resolved. No accepted hunk: discarded, nothing
    written. Returns the file's new hash (None when nothing was written)."""
    draft = proposal.draft
    hunks = proposal_hunks(proposal)
    chosen = set(accepted)
    if not chosen <= {hunk.index for hunk in hunks}:
        raise Refused("That proposal has no such change.")
    with _locks[draft.key]:
        proposal.refresh_from_db()
        if proposal.status != Proposal.Status.PENDING:
            raise Conflict("This suggestion was already applied or discarded.")
        current = sandbox.read_text(draft.owner_id, draft.key, proposal.filename)
        if sandbox.file_hash(current) != proposal.base_hash:
            raise Conflict(
                f"“{proposal.filename}” changed after the suggestion was made; "
                "nothing was written. Ask for a new suggestion."
            )
        if not chosen:
            _resolve(proposal, Proposal.Status.DISCARDED, [])
            return None
        merged = apply_hunks(current, hunks, chosen)
        with transaction.atomic():
            _snapshot(draft, proposal.filename, current, Snapshot.Reason.PROPOSAL)
            _touch(draft)
        # Written before the proposal is marked applied: a write that fails
        # (size cap, disk) leaves it pending, never "applied" with the file unchanged.
        sandbox.write_text(draft.owner_id, draft.key, proposal.filename, merged)
        _resolve(proposal, Proposal.Status.APPLIED, sorted(chosen))
    return sandbox.file_hash(merged)


def proposal_discard(*, proposal: Proposal) -> None:
    if proposal.status == Proposal.Status.PENDING:
        _resolve(proposal, Proposal.Status.DISCARDED, [])


def _resolve(proposal: Proposal, status: str, accepted: list[int]) -> None:
    proposal.status = status
    proposal.accepted = accepted
    proposal.resolved_at = timezone.now()
    proposal.save(update_fields=["status", "accepted", "resolved_at"])


def draft_delete(*, draft: Draft) -> None:
    """A person's delete: the folder, its snapshots and proposals. Never
    offered to the assistant."""
    sandbox.remove_folder(draft.owner_id, draft.key)
    sandbox.remove_builds(draft.owner_id, draft.key)
    draft.delete()


def drafts_prune(*, days: int, now=None) -> list[str]:
    """Remove drafts untouched for `days` (0: none), except kept ones, by
    owner id and key under the drafts root only. Returns their titles."""
    if days <= 0:
        return []
    cutoff = (now or timezone.now()) - timedelta(days=days)
    removed = []
    for draft in Draft.objects.filter(updated_at__lt=cutoff, keep=False).order_by("pk"):
        draft_delete(draft=draft)
        removed.append(draft.title)
    return removed
