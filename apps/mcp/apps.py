from django.apps import AppConfig


class McpConfig(AppConfig):
    """Its Settings page (`registrations`) is added by apps.core's ready()."""

    name = "apps.mcp"
    label = "mcp"
    verbose_name = "MCP server"
