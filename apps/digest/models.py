"""The paper digest: each person's configuration, every digest run, and the
claim that keeps two runs for one person from overlapping."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone


class DigestSettings(models.Model):
    """What one person's weekly digest fetches and how it is scored.

    Only consulted while the instance switch (InstanceSettings.digest_enabled)
    is on and the person has the run-digest permission; kept when either goes
    off, so switching back on needs no re-entry.
    """

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="digest_settings",
    )
    enabled = models.BooleanField(default=True)
    # [[name, limit], ...]: the newest `limit` papers of each category within the week.
    arxiv_categories = models.JSONField(default=list, blank=True)
    biorxiv_categories = models.JSONField(default=list, blank=True)
    # Matched client-side against title and abstract across all of bioRxiv's week.
    biorxiv_keywords = models.JSONField(default=list, blank=True)
    research_context = models.TextField(blank=True)
    # "<connection>:<model id>"; blank = the person's default model. Checked
    # again at every run (permissions and the catalogue can change).
    model_label = models.CharField(max_length=300, blank=True)
    # Subfolder of DATA_DIR/digests/<user id>/ (apps.digest.config.clean_folder).
    folder = models.CharField(max_length=200, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "digest settings"
        verbose_name_plural = "digest settings"

    def __str__(self) -> str:
        return f"Digest settings of {self.user}"

    @property
    def has_sources(self) -> bool:
        return bool(self.arxiv_categories or self.biorxiv_categories or self.biorxiv_keywords)


class Digest(models.Model):
    """One run of a person's digest: its outcome, its papers and where it went.

    A failed run keeps its reason (shown on the Digests page) and never has a
    document: the Markdown is indexed only once the whole digest is written.
    """

    class Status(models.TextChoices):
        RUNNING = "running", "Running"
        OK = "ok", "Done"
        FAILED = "failed", "Failed"

    class Trigger(models.TextChoices):
        SCHEDULED = "scheduled", "Weekly slot"
        CATCH_UP = "catch-up", "Catch-up after a missed slot"
        MANUAL = "manual", "Run from the Digests page"
        COMMAND = "command", "manage.py digest"

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="digests"
    )
    trigger = models.CharField(max_length=12, choices=Trigger.choices)
    # The weekly slot this run serves (None for a run someone asked for).
    slot = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(default=timezone.now, db_index=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.RUNNING)
    error = models.TextField(blank=True)
    title = models.CharField(max_length=200, blank=True)
    model_label = models.CharField(max_length=300, blank=True)
    # Relative to DATA_DIR/digests/ ("<user id>/<folder>/digest-YYYY-MM-DD.md").
    file_path = models.CharField(max_length=1000, blank=True)
    document = models.ForeignKey(
        "library.Document", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    markdown = models.TextField(blank=True)
    # One dict per paper: title, link, source, ids, score, track, summary, why,
    # tier, and what went into the library (apps.digest.pipeline.Paper.as_item).
    items = models.JSONField(default=list, blank=True)
    # fetched, deduplicated, scored, tiers, full_text, summaries, failed_batches.
    stats = models.JSONField(default=dict, blank=True)
    failed_batches = models.JSONField(default=list, blank=True)
    warnings = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["-started_at", "-id"]
        indexes = [models.Index(fields=["owner", "status", "-started_at"])]

    def __str__(self) -> str:
        return self.title or f"Digest {self.pk} ({self.status})"

    def tier_count(self, tier: str) -> int:
        return int((self.stats.get("tiers") or {}).get(tier, 0))


class DigestClaim(models.Model):
    """Who is running a person's digest right now: one row per person, taken
    with a single conditional UPDATE so the weekly run and the catch-up cannot
    both start. A run renews `claimed_at` as it works; a claim older than
    JARVIS_DIGEST_CLAIM_STALE_MINUTES belongs to a worker that died and may be
    taken over."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    token = models.CharField(max_length=32, blank=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    trigger = models.CharField(max_length=12, blank=True)

    def __str__(self) -> str:
        return f"digest claim of {self.user_id}: {self.claimed_at or 'free'}"
