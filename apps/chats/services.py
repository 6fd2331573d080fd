"""The chats' write path: starting a turn, regenerating a reply, editing a
sent message, showing another branch, renaming, pinning, deleting, switching
model, the notes-only toggle, marking a chat private, answering a
confirmation card (removing a document, keeping a memory), a chat's own
instructions, and a person's assistant preferences and instructions."""

from __future__ import annotations

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from apps.accounts.memories import memory_add
from apps.accounts.models import User
from apps.accounts.response_style import set_response_style
from apps.chats import approvals, history, tree
from apps.chats.attachments import ATTACHED_IMAGE, attachments_of, mentions_and_blocks
from apps.chats.flood import flood_check
from apps.chats.models import Chat, Message, PendingAction
from apps.chats.selectors import busy_message_for
from apps.core.errors import Conflict, Refused
from apps.instance.models import ModelEntry
from apps.instance.selectors import instance_settings
from apps.library.selectors import visible_to
from apps.library.services import document_remove
from apps.llm.selectors import default_model_for, model_for
from apps.llm.services import user_default_model_set

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


BUSY = "a reply is still being written: stop it or wait for it"


def turn_start(
    *,
    user,
    chat: Chat | None,
    text: str,
    mentions: list[dict] | None = None,
    model_label: str = "",
    context: str = "",
    after: int | None = None,
    attachments: list[int] | None = None,
) -> tuple[Chat, Message, Message]:
    """Write the person's message and the reply's placeholder. A chat is only
    created here, with its first message (no empty chats). One turn at a time
    per chat: a second send while a reply runs is refused. `context` is a line
    for the model only (what the person has open), not shown as their words.
    `after` is the reply the person's page ends with, so the conversation goes
    on from what they see (a second tab may show an older branch); by default
    the chat's leaf. `attachments`: ids of the person's own uploads attached
    to the message (apps.chats.attachments): mentioned in the turn, images
    also shown to a vision model; any other id refuses the whole send."""
    text = validate_text(text)
    if chat is None and model_label:
        # The new-chat page's model picker: a model the person may not use
        # (a forged or stale label) refuses the send before anything is written.
        model_for(user=user, label=model_label)
    attached, images = mentions_and_blocks(attachments_of(user, attachments or []))
    mentions = [*(mentions or []), *attached]
    with transaction.atomic():
        created = chat is None
        if created:
            flood_check(user)
            chat = Chat.objects.create(owner=user, title=_title_from(text), model_label=model_label)
        else:
            _lock(chat)
            _refuse_private_on_cloud(chat)
            if not chat.title:
                # A chat made before its first message (an agent chat) is named by it.
                chat.title = _title_from(text)
                chat.save(update_fields=["title"])
        parent = _current_leaf(chat)
        if after is not None and after != parent and _is_reply_of(chat, after):
            parent = after
        question, answer = _exchange(chat, parent, text, context, mentions, images)
        _leaf_move(chat, answer.pk, grows=parent == chat.leaf_id, new=True)
    if created:
        chats_prune(owner=user)
    return chat, question, answer


def _lock(chat: Chat) -> None:
    """Inside the caller's transaction (IMMEDIATE: the write lock is held):
    refuse while a reply runs, and read the chat's branch fresh (another tab
    may have moved it since `chat` was loaded)."""
    if busy_message_for(chat=chat) is not None:
        raise Conflict(BUSY)
    # One person's flood of sends across many chats: refused, others unaffected.
    flood_check(chat.owner)
    # An agent chat whose owner lost the right to run things starts no turn
    # (nor a regenerated or edited one).
    refusal = approvals.policy_refusal(chat)
    if refusal:
        raise Refused(refusal)
    chat.refresh_from_db(fields=["leaf", "summary", "summary_upto"])


def _refuse_private_on_cloud(chat: Chat) -> None:
    """A private chat whose model is a cloud one (the default is, or the chat
    turned private in another tab) is refused before anything is written, by
    the composer, rather than as a failed reply."""
    if chat.private and not chat.is_agent:
        model = next_reply_model(chat)
        if model is not None and model.is_cloud:
            raise Refused(private_on_cloud(model))


def next_reply_model(chat: Chat) -> ModelEntry | None:
    """The model the chat's next reply would use (apps.chats.setup.chosen_model)."""
    try:
        if chat.model_label:
            return model_for(user=chat.owner, label=chat.model_label)
        return default_model_for(user=chat.owner)
    except Refused:
        return None  # the turn's own setup says why the model cannot be used


def _current_leaf(chat: Chat) -> int | None:
    if chat.leaf_id is not None:
        return chat.leaf_id
    # A chat never linked into a tree reads as one line: it ends with its newest message.
    return chat.messages.order_by("-pk").values_list("pk", flat=True).first()


def _is_reply_of(chat: Chat, pk: int) -> bool:
    return chat.messages.filter(pk=pk, role=Message.Role.ASSISTANT).exists()


def _exchange(
    chat: Chat,
    parent: int | None,
    text: str,
    context: str,
    mentions: list[dict],
    images: list[dict] | None = None,
) -> tuple[Message, Message]:
    """The person's message under `parent` and an empty reply under it.
    `images`: references to attached pictures (expanded when a turn is set up)."""
    model_text = f"{text}\n\n({context})" if context else text
    blocks = [{"type": "text", "text": model_text}, *(images or [])]
    question = Message.objects.create(
        chat=chat,
        parent_id=parent,
        role=Message.Role.USER,
        text=text,
        turns=[{"role": "user", "blocks": blocks}],
        mentions=mentions,
    )
    return question, _placeholder(chat, question.pk)


def _placeholder(chat: Chat, question: int) -> Message:
    return Message.objects.create(
        chat=chat, parent_id=question, role=Message.Role.ASSISTANT, status=Message.Status.PENDING
    )


def _leaf_move(chat: Chat, leaf: int, *, grows: bool, new: bool) -> None:
    """Show the branch ending at `leaf` (inside the caller's transaction).

    Growing the branch shown (a send) changes nothing else. Leaving it for
    another also drops a compaction summary that covers messages the new
    branch does not hold, and makes the searchable history follow the branch:
    an answer the person regenerated, or a question they edited, is no longer
    what the chat says. `new`: the leaf is a new exchange (the chat moves to
    the top of the list)."""
    fields: dict = {"leaf_id": leaf}
    if new:
        fields["updated_at"] = timezone.now()
    if not grows:
        path = tree.tree_of(chat, leaf=leaf).path()
        if chat.summary_upto and chat.summary_upto not in path:
            fields.update(summary="", summary_upto=0)
        history.index_branch(chat, _exchanges_on(chat, path))
    Chat.objects.filter(pk=chat.pk).update(**fields)
    for name, value in fields.items():
        setattr(chat, name, value)


def _exchanges_on(chat: Chat, path: list[int]) -> list[tuple[Message, Message]]:
    """The finished exchanges along `path`: (question, answer) pairs."""
    messages = {m.pk: m for m in tree.messages_on(chat, path)}
    return [
        (messages[m.parent_id], m)
        for m in messages.values()
        if m.role == Message.Role.ASSISTANT
        and m.status == Message.Status.DONE
        and m.parent_id in messages
    ]


def reply_regenerate(
    *, user, chat: Chat, reply: Message, model_label: str | None = None
) -> Message:
    """A new reply to the question `reply` answered, kept beside it (the
    earlier one stays as an alternative to page back to). With `model_label`
    the chat moves to that model first, under the model picker's rules: a
    private chat never moves to a cloud model. Returns the new reply's
    placeholder."""
    if reply.chat_id != chat.pk or reply.role != Message.Role.ASSISTANT or reply.parent_id is None:
        raise Refused("only a reply can be regenerated")
    with transaction.atomic():
        _lock(chat)
        if model_label is not None and model_label != chat.model_label:
            chat_model_set(user=user, chat=chat, label=model_label)
        _refuse_private_on_cloud(chat)
        answer = _placeholder(chat, reply.parent_id)
        _leaf_move(chat, answer.pk, grows=False, new=True)
    return answer


def message_edit(*, chat: Chat, message: Message, text: str) -> tuple[Message, Message]:
    """The person's message `message`, rewritten: a new message beside it
    (same place in the conversation, same mentions and context line) and a
    new reply to it. The old message and everything after it stay, as a
    branch to page back to."""
    if message.chat_id != chat.pk or message.role != Message.Role.USER:
        raise Refused("only your own messages can be edited")
    text = validate_text(text)
    with transaction.atomic():
        _lock(chat)
        _refuse_private_on_cloud(chat)
        question, answer = _exchange(
            chat,
            message.parent_id,
            text,
            _context_of(message),
            list(message.mentions or []),
            _images_of(message),
        )
        _leaf_move(chat, answer.pk, grows=False, new=True)
    return question, answer


def _context_of(message: Message) -> str:
    """The line for the model only that went with `message` (turn_start's
    `context`), so that an edit keeps it."""
    blocks = (message.turns or [{}])[0].get("blocks") or [{}]
    sent = blocks[0].get("text") or ""
    extra = sent[len(message.text) :] if sent.startswith(message.text) else ""
    if extra.startswith("\n\n(") and extra.endswith(")"):
        return extra[3:-1]
    return ""


def _images_of(message: Message) -> list[dict]:
    """The attached pictures of `message` (an edit keeps its attachments)."""
    return [
        block
        for turn in message.turns or []
        for block in turn.get("blocks") or []
        if block.get("type") == ATTACHED_IMAGE
    ]


def branch_show(*, chat: Chat, message: Message) -> None:
    """Page to `message` (an alternative reply, or an edited message): the
    chat shows, and continues from, the newest branch under it."""
    if message.chat_id != chat.pk:
        raise Refused("that message is not in this chat")
    with transaction.atomic():
        _lock(chat)
        leaf = tree.tree_of(chat).newest_leaf_under(message.pk)
        _leaf_move(chat, leaf, grows=leaf == chat.leaf_id, new=False)


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
        if busy_message_for(chat=chat) is None:
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


def private_on_cloud(entry: ModelEntry) -> str:
    """Why a private chat does not go to `entry`, a cloud model, and what to do instead."""
    name = entry.display_name or entry.label
    return (
        f"This chat has read local-only notes, so it can only continue on a local model, "
        f"and {name} is a cloud model. Choose a local model in the chat's model menu, "
        "or start a new chat to ask a cloud model."
    )


def chat_model_set(*, user, chat: Chat, label: str) -> None:
    """Switch the chat's model. A private chat cannot move to a cloud model."""
    label = (label or "").strip()
    if label:
        entry = model_for(user=user, label=label)
        if chat.private and entry.is_cloud:
            raise Refused(private_on_cloud(entry))
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
    improved defaults. The default model goes through llm's service, the one
    place that refuses a model the person may not use (not only the form)."""
    user_default_model_set(user=user, model=default_model)
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
