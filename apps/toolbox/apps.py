"""Outside tools for chats: remote MCP servers (the `mcp` SDK's client) and admin-defined
HTTP tools."""

from django.apps import AppConfig


class ToolboxConfig(AppConfig):
    """Its tool source (`registrations`) is added by apps.core's ready()."""

    name = "apps.toolbox"
    label = "toolbox"
    verbose_name = "Outside tools"
