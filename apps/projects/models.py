"""The project registry: one record per project, read from its notes.

A project is a note with `type: project` in its frontmatter, or a note in a
folder its collection marks as a projects folder. Its versions (the library's
version family) are one project; each version is read once (`ProjectReading`,
keyed by the note's content hash, so an unchanged note is never read again)
and the newest version's reading is the record (`Project`). Who may see a
project is who may see its latest note (`library.selectors.visible_to`); a
field whose passage sits in a private section is its owner's alone.
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from apps.library.models import Document, Source


class Status(models.TextChoices):
    ACTIVE = "active", "Active"
    PAUSED = "paused", "Paused"
    BLOCKED = "blocked", "Blocked"
    DONE = "done", "Done"
    DROPPED = "dropped", "Dropped"
    IDEA = "idea", "Idea"


class ProjectReading(models.Model):
    """What one version of a project's note says, in the fixed form.

    `fields` maps each field of the form (status, reason, next_steps,
    blockers, key_result) to `{"value", "origin", "ordinal", "section",
    "quote", "private"}`: the value, where it came from (frontmatter, model,
    rules), and the passage that says it (the chunk's ordinal in the note,
    stable while the note is unchanged). A field the note does not state is
    absent, never filled in."""

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="+")
    content_hash = models.CharField(max_length=64)
    name = models.CharField(max_length=200)
    status = models.CharField(max_length=10, choices=Status.choices, blank=True)
    fields = models.JSONField(default=dict)
    read_by = models.CharField(max_length=300)  # "rules", "model local:qwen…", "frontmatter"
    notes = models.JSONField(default=list, blank=True)  # fields the checks rejected, and why
    # Read by rules only because the model failed: read again on the next refresh.
    provisional = models.BooleanField(default=False)
    read_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["document"], name="projectreading_one_per_document")
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.status or 'no status'})"

    def value(self, field: str):
        entry = self.fields.get(field)
        return entry["value"] if entry else None


class Project(models.Model):
    """One project: a version family of project notes; its record is the
    latest version's reading."""

    source = models.ForeignKey(Source, on_delete=models.CASCADE, related_name="+")
    family = models.CharField(max_length=600)  # the library's family, or "doc:<id>"
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="+")
    reading = models.ForeignKey(ProjectReading, on_delete=models.CASCADE, related_name="+")
    name = models.CharField(max_length=200, db_index=True)
    status = models.CharField(max_length=10, choices=Status.choices, blank=True, db_index=True)
    # The latest note's date, decided by the library (never by a model); None when undated.
    last_updated = models.DateField(null=True, blank=True)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["source", "family"], name="project_one_per_family")
        ]
        ordering = ["name", "id"]

    def __str__(self) -> str:
        return self.name
