from django.apps import AppConfig


class McpConfig(AppConfig):
    name = "apps.mcp"
    label = "mcp"
    verbose_name = "MCP server"

    def ready(self) -> None:
        # Accounts owns the Settings menu but sits below this app: add our page to it.
        from apps.accounts.settings_pages import SettingsPage, settings_page_register

        settings_page_register(SettingsPage("Claude, Cursor (MCP)", "mcp:settings", 30))
