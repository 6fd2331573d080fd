"""Outside tools for chats: remote MCP servers (the `mcp` SDK's client) and admin-defined
HTTP tools."""

from django.apps import AppConfig


class ToolboxConfig(AppConfig):
    name = "apps.toolbox"
    label = "toolbox"
    verbose_name = "Outside tools"

    def ready(self) -> None:
        # chats cannot import the toolbox (it sits above), and the tools import
        # models (not loaded yet when this module is): they reach the chat
        # registry as a source asked afresh for every turn and call.
        from apps.toolbox.registrations import register_all

        register_all()
