"""Outside tools for chats: remote MCP servers (the `mcp` SDK's client) and admin-defined
HTTP tools."""

from django.apps import AppConfig


class ToolboxConfig(AppConfig):
    name = "apps.toolbox"
    label = "toolbox"
    verbose_name = "Outside tools"

    def ready(self) -> None:
        # chats cannot import the toolbox (it sits above): its tools reach the
        # chat registry as a source asked afresh for every turn and call.
        from apps.chats.tools.registry import register_source
        from apps.toolbox.chat_tools import needs_approval, outside_tools

        register_source(outside_tools, asks=needs_approval)
