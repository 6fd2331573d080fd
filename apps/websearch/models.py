"""The web search provider an admin configures: the household's own SearXNG
(its JSON API) or Brave Search's API with a key. None configured (or none
enabled) means chats offer no web search at all."""

from __future__ import annotations

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from apps.core import crypto
from apps.instance.models import validate_base_url

BRAVE_URL = "https://api.search.brave.com/res/v1/web/search"


class SearchProvider(models.Model):
    class Kind(models.TextChoices):
        SEARXNG = "searxng", "SearXNG (your own instance, JSON API)"
        BRAVE = "brave", "Brave Search API (needs a key)"

    class Location(models.TextChoices):
        LOCAL = "local", "Local (runs on your own network)"
        CLOUD = "cloud", "Cloud (a third party's servers)"

    name = models.CharField(max_length=60, unique=True)
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.SEARXNG)
    base_url = models.CharField(
        "base URL",
        max_length=500,
        blank=True,
        validators=[validate_base_url],
        help_text="SearXNG: your instance, e.g. http://searx.lan:8080 (its settings.yml must "
        f"list json under search: formats). Brave: leave blank for {BRAVE_URL}.",
    )
    # Fernet token (apps.core.crypto); never shown, never logged, never sent to a browser.
    api_key_encrypted = models.TextField(blank=True, editable=False)
    # Where the query goes first. A SearXNG at home is local, but it passes the
    # query on to the search engines it asks: either way the query leaves the
    # house, which is why a private chat shows it before it is sent.
    location = models.CharField(max_length=10, choices=Location.choices, blank=True)
    enabled = models.BooleanField(default=True)
    timeout_seconds = models.FloatField(
        default=8.0,
        validators=[MinValueValidator(0.5), MaxValueValidator(60)],
        help_text="How long to wait for the provider's answer, and for each result page.",
    )
    max_results = models.PositiveSmallIntegerField(
        default=5, validators=[MinValueValidator(1), MaxValueValidator(20)]
    )
    pages_to_read = models.PositiveSmallIntegerField(
        default=3,
        validators=[MaxValueValidator(10)],
        help_text="How many of the top results are fetched and read (0: snippets only).",
    )
    max_page_kb = models.PositiveIntegerField(
        "largest page read (KB)",
        default=1024,
        validators=[MinValueValidator(16), MaxValueValidator(10 * 1024)],
        help_text="A result page larger than this is not read (its snippet is used).",
    )
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        # Who may search: the accounts flag "use web search" (apps.accounts.permissions).

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        self.name = self.name.strip()
        self.base_url = self.base_url.strip().rstrip("/")
        if not self.location:
            self.location = self.default_location()

    def default_location(self) -> str:
        return self.Location.LOCAL if self.kind == self.Kind.SEARXNG else self.Location.CLOUD

    @property
    def url(self) -> str:
        if self.kind == self.Kind.BRAVE:
            return self.base_url or BRAVE_URL
        return self.base_url

    @property
    def is_cloud(self) -> bool:
        return (self.location or self.default_location()) != self.Location.LOCAL

    def set_api_key(self, text: str | None) -> None:
        """Store a key (encrypted); blank clears it. Call save() afterwards."""
        text = (text or "").strip()
        self.api_key_encrypted = crypto.encrypt(text) if text else ""

    @property
    def api_key(self) -> str | None:
        if not self.api_key_encrypted:
            return None
        return crypto.decrypt(self.api_key_encrypted)

    @property
    def masked_key(self) -> str:
        if not self.api_key_encrypted:
            return ""
        try:
            return crypto.mask(self.api_key)
        except crypto.SecretUndecryptable:
            return "(cannot decrypt: enter it again)"
