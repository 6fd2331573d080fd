"""What chats adds to the registries of the floors below it, imported once by
apps.core's ready(): the Settings page "Assistant" (accounts owns the Settings
menu but sits below chats)."""

from __future__ import annotations

from apps.accounts.settings_pages import SettingsPage, settings_page_register

settings_page_register(SettingsPage("Assistant", "assistant:page", 10))
