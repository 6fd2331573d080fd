"""Chats and their messages.

Messages form a tree: each has a parent (a reply's parent is the person's
message it answers; a person's message's parent is the reply before it), so a
regenerated reply or an edited message is a sibling kept beside the earlier
one. The chat's `leaf` is the newest message of the branch being shown; the
conversation is the path from the root to it (`apps.chats.tree`).

A message stores its part of the conversation as provider-neutral blocks
(`apps.llm.transcript`), so a chat can switch model mid-way; the rendered
answer, reasoning, tool activity and citations are kept beside them for the
page. Only the owner can see a chat: every lookup goes through
`selectors.chat_for`.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone


class Folder(models.Model):
    """A person's folder of chats in the sidebar. Deleting one puts its chats
    back at the top level (Chat.folder is SET_NULL); `collapsed` is kept here,
    not in the browser, so it survives a second device."""

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="chat_folders"
    )
    name = models.CharField(max_length=80)
    order = models.PositiveIntegerField(default=0)
    collapsed = models.BooleanField(default=False)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["order", "name", "id"]

    def __str__(self) -> str:
        return self.name


class StartingPoint(models.Model):
    """A prompt offered on every person's new-chat screen, edited by an admin
    (the person's own recent notes and projects are offered beside them)."""

    text = models.CharField(max_length=300)
    order = models.PositiveIntegerField(default=0)
    enabled = models.BooleanField(default=True)

    class Meta:
        ordering = ["order", "id"]

    def __str__(self) -> str:
        return self.text


class Chat(models.Model):
    class Kind(models.TextChoices):
        NORMAL = "normal", "Chat"
        # Runs tools on a remote machine over SSH; its profile, directory and
        # approval mode live in apps.agents (AgentSession), which sits above chats.
        AGENT = "agent", "Agent chat"

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="chats"
    )
    # Fixed at creation: a transcript whose earlier turns ran somewhere else
    # would not be one conversation. No service changes it.
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.NORMAL)
    title = models.CharField(max_length=200, blank=True)
    pinned = models.BooleanField(default=False)
    # The sidebar folder the person put it in (None: the top level).
    folder = models.ForeignKey(
        Folder, null=True, blank=True, on_delete=models.SET_NULL, related_name="chats"
    )
    # Set the first time local-only content enters the chat; never unset:
    # a private chat may only continue on a local model.
    private = models.BooleanField(default=False)
    notes_only = models.BooleanField(default=True)
    # The person's instructions for this chat only, added after theirs and the
    # instance's. Blank: none. Only the person edits it; no tool can.
    instructions = models.TextField(blank=True)
    model_label = models.CharField(
        max_length=300, blank=True
    )  # "connection:model", blank = default
    # Compaction: earlier turns summarised; messages up to `summary_upto` are
    # hidden from the model's request (still shown to the person).
    summary = models.TextField(blank=True)
    summary_upto = models.BigIntegerField(default=0)
    # The last message of the branch shown (and continued by the next send);
    # null for a chat whose messages were never linked (treated as linear).
    leaf = models.ForeignKey(
        "Message", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-pinned", "-updated_at"]

    def __str__(self) -> str:
        return self.title or f"Chat {self.pk}"

    @property
    def is_agent(self) -> bool:
        return self.kind == self.Kind.AGENT


class Message(models.Model):
    class Role(models.TextChoices):
        USER = "user", "You"
        ASSISTANT = "assistant", "Jarvis"

    class Status(models.TextChoices):
        PENDING = "pending", "Waiting"
        STREAMING = "streaming", "Answering"
        DONE = "done", "Done"
        STOPPED = "stopped", "Stopped"
        ERROR = "error", "Error"
        INTERRUPTED = "interrupted", "Interrupted"
        # Tool calls wait for the person's approval (agent chats); the turn
        # goes on when they answer the card, even after a restart.
        WAITING = "waiting", "Waiting for your approval"

    # What "in flight" means, defined once (querysets use them with status__in).
    # A reply not finished yet: a task is writing it, or it waits for the
    # person's answer on a card. The page shows it running (Stop, no usage
    # line) and a chat starts no other turn meanwhile.
    IN_FLIGHT = (Status.PENDING, Status.STREAMING, Status.WAITING)
    # A reply a task is writing now, in some web process: what the send
    # flood limit counts, what the periodic saves may overwrite, and what a
    # restart marks interrupted. A waiting reply has no task: it costs
    # nothing, survives a restart and goes on when the person answers.
    WRITING = (Status.PENDING, Status.STREAMING)

    chat = models.ForeignKey(Chat, on_delete=models.CASCADE, related_name="messages")
    # The message this one follows in its branch (None: the chat's first
    # message, or one of its edited versions).
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.CASCADE, related_name="children"
    )
    role = models.CharField(max_length=10, choices=Role.choices)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.DONE)
    # The message's turns in the provider-neutral transcript (user text; or the
    # assistant's text/tool calls and the tool results that answered them).
    turns = models.JSONField(default=list, blank=True)
    text = models.TextField(blank=True)  # the visible answer (Markdown) or the person's message
    reasoning = models.TextField(blank=True)
    activity = models.JSONField(default=list, blank=True)  # tool calls as shown to the person
    citations = models.JSONField(default=list, blank=True)
    notes = models.JSONField(default=list, blank=True)  # fixed lines: privacy caveat, uncited…
    model_label = models.CharField(max_length=300, blank=True)
    usage = models.JSONField(default=dict, blank=True)
    mentions = models.JSONField(
        default=list, blank=True
    )  # [{"kind": "document"|"collection", "id"}]
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.chat_id}#{self.pk} {self.role}"

    @property
    def in_flight(self) -> bool:
        return self.status in self.IN_FLIGHT


class PendingAction(models.Model):
    """Something the model asked for that only the person may do (remove a
    document): shown as a card, carried out only by the person's click."""

    class Kind(models.TextChoices):
        REMOVE_DOCUMENT = "remove_document", "Remove a document"
        # Draft cards link to the editor; a proposal is reviewed there, hunk by hunk.
        REVIEW_DRAFT_EDIT = "review_draft_edit", "Review a suggested change"
        DRAFT_CREATED = "draft_created", "A new draft"
        APPROVE_TOOLS = "approve_tools", "Approve tool calls"
        # The model proposes a memory; only the person's Keep stores it.
        REMEMBER = "remember", "Remember something"
        # The model asks the person one or more questions; the reply waits for the answers.
        ASK_USER = "ask_user", "Questions for you"
        # A private chat's web search: the query is shown before anything leaves the house.
        WEB_SEARCH = "web_search", "Search the web"

    class Status(models.TextChoices):
        PENDING = "pending", "Waiting for you"
        DONE = "done", "Done"
        DISMISSED = "dismissed", "Dismissed"

    message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="actions")
    kind = models.CharField(max_length=30, choices=Kind.choices)
    payload = models.JSONField(default=dict)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"{self.kind} ({self.status})"
