"""Outside tools an admin configures: remote MCP servers (with the tools their
last check stored) and HTTP tools defined by a URL template. Each is offered
only to the members of its groups; none reaches the model of a private chat
unless it is marked as on the household's own network."""

from __future__ import annotations

from django.contrib.auth.models import Group
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models

from apps.core import crypto

# A prefix of the names the model sees (`home__weather`), so lower case and
# short; no `__` and no `_` at its end, so a SERVER__TOOL name splits one way only.
SERVER_NAME = RegexValidator(
    r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$",
    "Lower-case letters and digits, single _ between them, starting with a letter.",
)
HTTP_TOOL_NAME = RegexValidator(
    r"^[a-z][a-z0-9_]{0,39}$",
    "Lower-case letters, digits and _ (up to 40), starting with a letter.",
)


class Location(models.TextChoices):
    # Fail closed: what the admin did not say is on their network counts as outside it.
    OUTSIDE = "outside", "Outside your network (a third party's server)"
    LOCAL = "local", "On your own network or this server"


LOCATION_HELP = (
    "A chat that has read notes kept for local models only never sends anything to a tool "
    "outside your network."
)
READ_ONLY_HELP = (
    "Tick only if a call never changes anything. In an agent chat a read-only tool runs in "
    "Ask and Plan mode; any other outside tool waits for approval in Ask and is refused in Plan."
)


class McpServer(models.Model):
    class Transport(models.TextChoices):
        HTTP = "http", "Streamable HTTP (a URL)"
        STDIO = "stdio", "stdio (a command this server runs)"

    name = models.CharField(
        max_length=20,
        unique=True,
        validators=[SERVER_NAME],
        help_text="Short name; the model sees each tool as NAME__TOOL.",
    )
    transport = models.CharField(max_length=10, choices=Transport.choices, default=Transport.HTTP)
    url = models.CharField(
        "URL", max_length=500, blank=True, help_text="e.g. https://tools.home.lan/mcp"
    )
    # An argv list, run without a shell: nothing in it is ever interpreted.
    command = models.CharField(
        max_length=500, blank=True, help_text="The program to run, e.g. /usr/bin/uvx."
    )
    args = models.JSONField(
        default=list,
        blank=True,
        help_text='Its arguments as a JSON list, e.g. ["mcp-server-time"]. No shell is used.',
    )
    # Fernet token (apps.core.crypto); never shown, never logged, sent only as
    # the Authorization header of the HTTP transport.
    token_encrypted = models.TextField(blank=True, editable=False)
    groups = models.ManyToManyField(
        Group,
        blank=True,
        related_name="+",
        help_text="Only members' chats are offered these tools; none chosen: nobody.",
    )
    location = models.CharField(
        max_length=10, choices=Location.choices, default=Location.OUTSIDE, help_text=LOCATION_HELP
    )
    timeout_seconds = models.PositiveSmallIntegerField(
        default=30,
        validators=[MinValueValidator(1), MaxValueValidator(600)],
        help_text="A call (connecting included) that takes longer fails with a timeout.",
    )
    enabled = models.BooleanField(default=True)
    checked_at = models.DateTimeField(null=True, blank=True, editable=False)
    # Why the last check stored no tools ("" after a good one): shown in admin.
    check_error = models.TextField(blank=True, editable=False)

    class Meta:
        ordering = ["name"]
        verbose_name = "MCP server"

    def __str__(self) -> str:
        return self.name

    def set_token(self, text: str | None) -> None:
        """Store a bearer token (encrypted); blank clears it. Call save() afterwards."""
        text = (text or "").strip()
        self.token_encrypted = crypto.encrypt(text) if text else ""

    @property
    def token(self) -> str | None:
        """The plain token, or None; crypto.SecretUndecryptable when its key is gone."""
        return crypto.decrypt(self.token_encrypted) if self.token_encrypted else None

    @property
    def masked_token(self) -> str:
        if not self.token_encrypted:
            return ""
        try:
            return crypto.mask(self.token)
        except crypto.SecretUndecryptable:
            return "(cannot be decrypted: enter it again)"


class McpTool(models.Model):
    """A tool the server listed at its last good check."""

    server = models.ForeignKey(McpServer, on_delete=models.CASCADE, related_name="tools")
    name = models.CharField(max_length=200)  # as the server names it
    # What the model calls it: SERVER__TOOL, unique across servers.
    exposed_name = models.CharField(max_length=64, unique=True)
    description = models.TextField(blank=True)
    input_schema = models.JSONField(default=dict)
    enabled = models.BooleanField(default=True)
    read_only = models.BooleanField(default=False, help_text=READ_ONLY_HELP)

    class Meta:
        ordering = ["server__name", "name"]
        constraints = [
            models.UniqueConstraint(fields=["server", "name"], name="toolbox_tool_once_per_server")
        ]
        verbose_name = "MCP tool"

    def __str__(self) -> str:
        return self.exposed_name


class HttpTool(models.Model):
    """A GET to a URL template: scheme and host written out, arguments only in
    the path and query (apps.toolbox.url_templates)."""

    name = models.CharField(
        max_length=40,
        unique=True,
        validators=[HTTP_TOOL_NAME],
        help_text="What the model calls it, e.g. weather.",
    )
    description = models.TextField(help_text="What the tool does, for the model.")
    url_template = models.CharField(
        "URL template",
        max_length=1000,
        help_text="e.g. https://api.example.org/weather?city={city}. Placeholders only in the "
        "path and query; each becomes an argument the model fills in.",
    )
    groups = models.ManyToManyField(
        Group,
        blank=True,
        related_name="+",
        help_text="Only members' chats are offered this tool; none chosen: nobody.",
    )
    location = models.CharField(
        max_length=10, choices=Location.choices, default=Location.OUTSIDE, help_text=LOCATION_HELP
    )
    read_only = models.BooleanField(default=False, help_text=READ_ONLY_HELP)
    timeout_seconds = models.PositiveSmallIntegerField(
        default=10, validators=[MinValueValidator(1), MaxValueValidator(120)]
    )
    max_kb = models.PositiveIntegerField(
        "size cap (KB)",
        default=512,
        validators=[MinValueValidator(1), MaxValueValidator(10_240)],
        help_text="A larger answer is refused.",
    )
    enabled = models.BooleanField(default=True)

    class Meta:
        ordering = ["name"]
        verbose_name = "HTTP tool"

    def __str__(self) -> str:
        return self.name
