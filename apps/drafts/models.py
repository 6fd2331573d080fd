"""Drafts: folders of files the assistant and the person write together.

The text lives on disk (`apps.drafts.sandbox` is the only way in or out); the
database keeps what the page and the tools need around it: the draft's title
and privacy, earlier versions of each file (snapshots, taken before every
write) and the assistant's pending proposals, which survive a restart.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone


class Draft(models.Model):
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="drafts"
    )
    # The folder name under DRAFTS_ROOT/<owner id>/: random hex, never derived
    # from a title or from anything a model chose.
    key = models.CharField(max_length=16, unique=True)
    title = models.CharField(max_length=200)
    main_file = models.CharField(max_length=120)
    # Inherited from the chat that made it: a private chat's draft holds text
    # from local-only notes and is never shown to a cloud model.
    private = models.BooleanField(default=False)
    keep = models.BooleanField(default=False, help_text="Exempt from the retention sweep.")
    chat = models.ForeignKey(
        "chats.Chat", null=True, blank=True, on_delete=models.SET_NULL, related_name="drafts"
    )
    created_at = models.DateTimeField(default=timezone.now)
    # Moved by every write (the retention sweep reads it), not by viewing.
    updated_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-updated_at"]

    def __str__(self) -> str:
        return self.title


class Snapshot(models.Model):
    """A file's text as it was just before a write replaced it."""

    class Reason(models.TextChoices):
        SAVE = "save", "before your save"
        RESTORE = "restore", "before a restore"
        PROPOSAL = "proposal", "before accepting a suggestion"

    draft = models.ForeignKey(Draft, on_delete=models.CASCADE, related_name="snapshots")
    filename = models.CharField(max_length=120)
    text = models.TextField()
    sha256 = models.CharField(max_length=64)
    reason = models.CharField(max_length=10, choices=Reason.choices)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["draft", "filename", "-created_at"])]

    def __str__(self) -> str:
        return f"{self.filename} ({self.get_reason_display()})"


class Proposal(models.Model):
    """A change the assistant suggested to an existing file: hunks a person
    accepts or rejects one by one. Nothing is written until they apply it."""

    class Status(models.TextChoices):
        PENDING = "pending", "Waiting for review"
        APPLIED = "applied", "Applied"
        DISCARDED = "discarded", "Discarded"

    draft = models.ForeignKey(Draft, on_delete=models.CASCADE, related_name="proposals")
    filename = models.CharField(max_length=120)
    # The file as the proposal saw it: applying refuses if it has changed since.
    base_hash = models.CharField(max_length=64)
    base_text = models.TextField()
    new_text = models.TextField()
    hunks = models.JSONField(default=list)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    accepted = models.JSONField(default=list, blank=True)  # hunk indices, once applied
    chat = models.ForeignKey(
        "chats.Chat", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    resolved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"Suggestion for {self.filename}"
