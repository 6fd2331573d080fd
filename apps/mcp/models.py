"""Access tokens for the MCP endpoint (`/mcp/`): one per app a person
connects (Claude Desktop, Cursor…). Only a hash is stored; the token itself
is shown once, when it is made. A revoked token stays listed, refused."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone


class McpToken(models.Model):
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="mcp_tokens"
    )
    name = models.CharField(max_length=80)
    prefix = models.CharField(max_length=16)  # the token's first characters, to tell them apart
    token_hash = models.CharField(max_length=64, unique=True)  # sha256 of the whole token
    created_at = models.DateTimeField(default=timezone.now)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def active(self) -> bool:
        return self.revoked_at is None
