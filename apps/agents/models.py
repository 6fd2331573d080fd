"""SSH profiles (how a person reaches a machine, and the host key they
accepted for it) and what makes a chat an agent chat (AgentSession)."""

from __future__ import annotations

import re

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models.functions import Lower

from apps.core import crypto

# Host names, IPv4 and IPv6 literals (with a %zone). No spaces, and no leading
# dash: nothing here is ever put on a command line, but a value that looks
# like an option is a mistake worth refusing early.
_HOST = re.compile(r"[A-Za-z0-9._:%-]{1,253}")
_USERNAME = re.compile(r"[A-Za-z0-9._][A-Za-z0-9._@$-]{0,63}")


def validate_host(value: str) -> None:
    if not _HOST.fullmatch(value) or value.startswith("-"):
        raise ValidationError("Enter a host name or an IP address.", code="host")


def validate_username(value: str) -> None:
    if not _USERNAME.fullmatch(value):
        raise ValidationError(
            "Enter the user name on the remote machine (letters, digits, . _ - @).",
            code="username",
        )


class SSHProfile(models.Model):
    """How one person reaches one remote machine: where, as whom, with which
    secret, and the host key they accepted for it."""

    class Auth(models.TextChoices):
        KEY = "key", "Private key"
        PASSWORD = "password", "Password"

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="ssh_profiles"
    )
    name = models.CharField(max_length=80)
    host = models.CharField(max_length=253, validators=[validate_host])
    port = models.PositiveIntegerField(
        default=22, validators=[MinValueValidator(1), MaxValueValidator(65535)]
    )
    username = models.CharField(max_length=64, validators=[validate_username])
    auth = models.CharField(max_length=10, choices=Auth.choices, default=Auth.KEY)
    # Fernet tokens (apps.core.crypto); never shown, never sent to a browser.
    private_key_encrypted = models.TextField(blank=True, editable=False)
    password_encrypted = models.TextField(blank=True, editable=False)
    # The authorized_keys line of the profile's key: public, shown so it can
    # be copied to the server.
    public_key = models.TextField(blank=True, editable=False)
    # The accepted host key (an OpenSSH public-key line). Empty: not accepted
    # yet, and nothing but a key exchange will be attempted.
    host_key = models.TextField(blank=True, editable=False)
    host_key_fingerprint = models.CharField(max_length=100, blank=True, editable=False)
    host_key_pinned_at = models.DateTimeField(null=True, blank=True, editable=False)
    shared_groups = models.ManyToManyField(
        "auth.Group",
        blank=True,
        related_name="+",
        help_text="Members of these groups (with the agent-chats permission) may use "
        "this profile; only its owner can change it.",
    )
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "SSH profile"
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(
                "owner", Lower("name"), name="agents_sshprofile_name_unique_per_owner"
            )
        ]

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        # Spelled out so that no future field sneaks a secret into a traceback.
        return f"<SSHProfile {self.pk} {self.name!r} {self.username}@{self.host}:{self.port}>"

    def clean(self) -> None:
        self.name = self.name.strip()
        self.host = self.host.strip()
        self.username = self.username.strip()
        if not self.name:
            raise ValidationError({"name": "A profile needs a name."})

    def set_private_key(self, text: str | None) -> None:
        self.private_key_encrypted = crypto.encrypt(text) if text else ""

    def set_password(self, text: str | None) -> None:
        self.password_encrypted = crypto.encrypt(text) if text else ""

    @property
    def private_key(self) -> str | None:
        """The decrypted key; crypto.SecretUndecryptable if its Fernet key is gone."""
        return crypto.decrypt(self.private_key_encrypted) if self.private_key_encrypted else None

    @property
    def password(self) -> str | None:
        return crypto.decrypt(self.password_encrypted) if self.password_encrypted else None

    @property
    def is_pinned(self) -> bool:
        return bool(self.host_key)


def validate_project_dir(value: str) -> None:
    # An absolute path: SFTP does not expand "~", and a relative one would
    # depend on where each connection happens to land.
    if not value.startswith("/") or any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise ValidationError(
            "Enter an absolute directory on the remote machine, e.g. /home/me/project.",
            code="project_dir",
        )


class AgentSession(models.Model):
    """What makes a chat an agent chat: the machine (profile), the project
    directory on it, and how much the person wants to approve. One per chat of
    kind "agent", created with it; the profile and directory never change, the
    mode does (between turns)."""

    class Mode(models.TextChoices):
        # Enforced by the chat loop for each tool call, never by the prompt.
        PLAN = "plan", "Plan"  # read-only tools run; commands and writes are refused
        ASK = "ask", "Ask"  # reads run; commands and writes wait for approval
        MANUAL = "manual", "Manual"  # every call waits for approval
        AUTO = "auto", "Auto"  # everything runs

    chat = models.OneToOneField(
        "chats.Chat", on_delete=models.CASCADE, primary_key=True, related_name="agent_session"
    )
    # SET_NULL: deleting a profile leaves its chats readable; they can no
    # longer run anything (the page says so).
    profile = models.ForeignKey(
        SSHProfile, on_delete=models.SET_NULL, null=True, related_name="agent_sessions"
    )
    project_dir = models.CharField(max_length=1024, validators=[validate_project_dir])
    mode = models.CharField(max_length=10, choices=Mode.choices, default=Mode.ASK)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "agent chat"

    def __str__(self) -> str:
        where = f"{self.profile.name}:" if self.profile_id else "(no profile):"
        return f"{where}{self.project_dir} [{self.mode}]"
