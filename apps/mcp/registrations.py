"""What the MCP server adds to the registries of the floors below it, imported
once by apps.core's ready(): the Settings page for app tokens (accounts owns
the Settings menu but sits below mcp)."""

from __future__ import annotations

from apps.accounts.settings_pages import SettingsPage, settings_page_register

settings_page_register(SettingsPage("Claude, Cursor (MCP)", "mcp:settings", 30))
