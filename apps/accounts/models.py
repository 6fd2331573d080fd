"""People (the custom User: display name, theme, default model, response style),
permission flags, sign-in failures."""

from __future__ import annotations

from django.contrib.auth.models import AbstractUser
from django.db import models
from django.utils import timezone


class User(AbstractUser):
    """A person in the household.

    The permission flags below are granted through groups (a user's flags are
    the union of their groups'). Superusers pass every flag check because flags
    guard configuration and features, never other people's content: privacy
    lives in the library's `visible_to` selector, which ignores superuser status.
    """

    class Theme(models.TextChoices):
        SYSTEM = "system", "Follow the system"
        LIGHT = "light", "Light"
        DARK = "dark", "Dark"

    display_name = models.CharField(max_length=80, blank=True)
    theme = models.CharField(max_length=10, choices=Theme.choices, default=Theme.SYSTEM)
    # Enter sends a chat message (Shift+Enter: a new line), as in every chat
    # app; some people prefer Enter for lines and Ctrl+Enter to send.
    send_with_ctrl_enter = models.BooleanField(default=False)
    # The model their chats start with; ignored (instance default) once they may
    # no longer use it (apps.instance.selectors.default_model_for).
    default_model = models.ForeignKey(
        "instance.ModelEntry",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    # How they like answers written; blank means the built-in style
    # (apps.accounts.response_style.DEFAULT_RESPONSE_STYLE).
    response_style = models.TextField(blank=True)
    # Their own standing instructions, added after the instance prompt in
    # every chat of theirs (before a chat's own instructions). Blank: none.
    instructions = models.TextField(blank=True)

    class Meta:
        permissions = [
            ("use_cloud_models", "Can use cloud LLM models"),
            ("use_agent_chats", "Can use agent chats"),
            ("manage_folder_sources", "Can register and manage folder sources"),
            ("run_paper_digest", "Can run the paper digest"),
            # Checked by apps.websearch (above accounts in the floors, so the
            # flag lives here with the others the group page shows).
            ("use_web_search", "Can use web search in chats"),
        ]

    def __str__(self) -> str:
        return self.username

    @property
    def name(self) -> str:
        return self.display_name or self.username

    @property
    def is_household_member(self) -> bool:
        return self.groups.filter(name=HOUSEHOLD_GROUP).exists()


# Members of this group are "the household": collections shared with the
# household are visible to them. A user outside it (a guest account) sees only
# their own content and what is shared with a group they are in.
HOUSEHOLD_GROUP = "household"


class LoginFailure(models.Model):
    """A failed sign-in, kept for the throttling window.

    Stored in the database rather than a per-process cache so the limit holds
    across restarts and across processes.
    """

    username = models.CharField(max_length=150, db_index=True)
    ip = models.GenericIPAddressField(null=True, blank=True, db_index=True)
    at = models.DateTimeField(default=timezone.now, db_index=True)

    def __str__(self) -> str:
        return f"{self.username} from {self.ip} at {self.at:%Y-%m-%d %H:%M:%S}"


class Memory(models.Model):
    """A short fact or preference a person asked Jarvis to remember ("I am
    vegetarian", "call me Liv"). Only the person's click stores one (the model
    can only propose it). It goes into the system prompt of that person's
    chats only, and to a cloud model only when they marked it cloud-allowed."""

    MAX_CHARS = 300

    owner = models.ForeignKey(User, on_delete=models.CASCADE, related_name="memories")
    text = models.CharField(max_length=MAX_CHARS)
    # Fail closed: local models only until the person says otherwise.
    cloud_allowed = models.BooleanField(default=False)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return self.text[:60]
