"""The chats' write path: starting a turn, renaming, pinning, deleting,
switching model, the notes-only toggle, marking a chat private, answering a
confirmation card (removing a document, keeping a memory), a chat's own
instructions, and a person's assistant preferences and instructions."""

from __future__ import annotations

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from apps.accounts.memories import memory_add
from apps.accounts.models import User
from apps.chats import history
from apps.chats.models import Chat, Message, PendingAction
from apps.chats.selectors import busy_message
from apps.core.errors import Conflict, Refused
from apps.instance.models import ModelEntry
from apps.instance.prompts import set_response_style
from apps.instance.selectors import instance_settings
from apps.library.selectors import visible_to
from apps.library.services.documents import document_remove
from apps.llm.selectors import resolve_model

TITLE_CHARS = 80
INSTRUCTIONS_MAX_CHARS = 4000


def validate_text(text: str) -> str:
    text = (text or "").strip()
    if not text:
        raise Refused("write a message first")
    if len(text) > settings.CHAT_MAX_CHARS:
        raise Refused(
            f"that message is {len(text):,} characters; the limit is {settings.CHAT_MAX_CHARS:,}"
        )
    return text


def _title_from(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1] + "…"


def turn_start(
    *,
    user,
    chat: Chat | None,
    text: str,
    mentions: list[dict] | None = None,
    model_label: str = "",
    context: str = "",
) -> tuple[Chat, Message, Message]:
    """Write the person's message and the reply's placeholder. A chat is only
    created here, with its first message (no empty chats). One turn at a time
    per chat: a second send while a reply runs is refused. `context` is a line
    for the model only (what the person has open), not shown as their words."""
    text = validate_text(text)
    model_text = f"{text}\n\n({context})" if context else text
    with transaction.atomic():
        created = chat is None
        if created:
            chat = Chat.objects.create(owner=user, title=_title_from(text), model_label=model_label)
        elif busy_message(chat) is not None:
            raise Conflict("a reply is still being written: stop it or wait for it")
        question = Message.objects.create(
            chat=chat,
            role=Message.Role.USER,
            text=text,
            turns=[{"role": "user", "blocks": [{"type": "text", "text": model_text}]}],
            mentions=mentions or [],
        )
        answer = Message.objects.create(
            chat=chat, role=Message.Role.ASSISTANT, status=Message.Status.PENDING
        )
        Chat.objects.filter(pk=chat.pk).update(updated_at=timezone.now())
    if created:
        chats_prune(owner=user)
    return chat, question, answer


def chats_prune(*, owner) -> int:
    """Remove the person's unpinned chats beyond the instance's limit, oldest
    first, each with its indexed history; never a pinned chat, never one whose
    reply is still being written. Returns how many went."""
    kept = instance_settings().chats_kept
    if not kept:
        return 0
    unpinned = Chat.objects.filter(owner=owner, pinned=False).order_by("-updated_at", "-id")
    removed = 0
    for chat in unpinned[kept:]:
        if busy_message(chat) is None:
            chat_delete(chat=chat)
            removed += 1
    return removed


def chat_rename(*, chat: Chat, title: str) -> None:
    title = " ".join((title or "").split())[:200]
    if not title:
        raise Refused("a chat needs a title")
    chat.title = title
    chat.save(update_fields=["title"])


def chat_pin_toggle(*, chat: Chat) -> None:
    chat.pinned = not chat.pinned
    chat.save(update_fields=["pinned"])


def chat_notes_only_set(*, chat: Chat, notes_only: bool) -> None:
    chat.notes_only = notes_only
    chat.save(update_fields=["notes_only"])


def chat_delete(*, chat: Chat) -> None:
    """The chat, its messages and its indexed history."""
    with transaction.atomic():
        history.forget_chat(chat.pk)
        chat.delete()


def chat_mark_private(*, chat: Chat) -> bool:
    """Local-only content entered the chat: it is private from now on."""
    if chat.private:
        return False
    with transaction.atomic():
        Chat.objects.filter(pk=chat.pk).update(private=True)
        history.mark_private(chat)
    chat.private = True
    return True


def chat_model_set(*, user, chat: Chat, label: str) -> None:
    """Switch the chat's model. A private chat cannot move to a cloud model."""
    label = (label or "").strip()
    if label:
        entry = resolve_model(user, label)
        if chat.private and entry.is_cloud:
            raise Refused(
                "this chat has read local-only notes, so it can only continue on a local model"
            )
    chat.model_label = label
    chat.save(update_fields=["model_label"])


def action_resolve(
    *,
    user,
    action: PendingAction,
    confirm: bool,
    text: str | None = None,
    cloud_allowed: bool = False,
) -> str:
    """The person's answer to a confirmation card. For a memory card, `text`
    is what they kept (they may have edited it) and `cloud_allowed` their choice."""
    if action.message.chat.owner_id != user.pk:
        raise Refused("not your chat")
    if action.kind == PendingAction.Kind.REMEMBER:
        return _memory_resolve(user, action, confirm, text, cloud_allowed)
    if action.kind != PendingAction.Kind.REMOVE_DOCUMENT:
        # Draft cards are links to the editor; their review happens there.
        return "This card has nothing to confirm."
    if action.status != PendingAction.Status.PENDING:
        return "This was already answered."
    if not confirm:
        action.status = PendingAction.Status.DISMISSED
        action.save(update_fields=["status"])
        return "Kept: nothing was removed."
    document = visible_to(user).filter(pk=action.payload.get("document_id")).first()
    if document is None or document.source.owner_id != user.pk:
        action.status = PendingAction.Status.DISMISSED
        action.save(update_fields=["status"])
        return "That document is no longer in your library."
    title = document.title
    document_remove(user=user, document=document)
    action.status = PendingAction.Status.DONE
    action.save(update_fields=["status"])
    return f"Removed “{title}” from the library. No file was touched."


def _memory_resolve(
    user, action: PendingAction, confirm: bool, text: str | None, cloud_allowed: bool
) -> str:
    if action.status != PendingAction.Status.PENDING:
        return "This was already answered."
    if not confirm:
        action.status = PendingAction.Status.DISMISSED
        action.save(update_fields=["status"])
        return "Not kept: nothing was stored."
    memory = memory_add(
        owner=user,
        text=action.payload.get("text", "") if text is None else text,
        cloud_allowed=cloud_allowed,
    )  # a Refused (empty, too long, too many) leaves the card pending
    action.status = PendingAction.Status.DONE
    action.payload = {**action.payload, "text": memory.text, "cloud_allowed": cloud_allowed}
    action.save(update_fields=["status", "payload"])
    return f"Kept: Jarvis will remember “{memory.text}”."


def chat_instructions_set(*, chat: Chat, text: str) -> None:
    """The person's instructions for this chat (blank: none; that is Revert)."""
    text = (text or "").replace("\r\n", "\n").strip()
    if len(text) > INSTRUCTIONS_MAX_CHARS:
        raise Refused(f"instructions are at most {INSTRUCTIONS_MAX_CHARS:,} characters")
    chat.instructions = text
    chat.save(update_fields=["instructions"])


def assistant_preferences_set(
    *,
    user: User,
    default_model: ModelEntry | None,
    response_style: str,
    instructions: str | None = None,
) -> None:
    """Save a person's default model, answer style and instructions. A style
    equal to the built-in default stores nothing, so they keep getting
    improved defaults."""
    user.default_model = default_model
    user.save(update_fields=["default_model"])
    set_response_style(user, response_style)
    if instructions is not None:
        personal_instructions_set(user=user, text=instructions)


def personal_instructions_set(*, user: User, text: str) -> None:
    """A person's instructions for all their chats (blank: none; that is Revert)."""
    text = (text or "").replace("\r\n", "\n").strip()
    if len(text) > INSTRUCTIONS_MAX_CHARS:
        raise Refused(f"instructions are at most {INSTRUCTIONS_MAX_CHARS:,} characters")
    user.instructions = text
    user.save(update_fields=["instructions"])
