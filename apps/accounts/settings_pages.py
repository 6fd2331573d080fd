"""The pages under Settings, shown as one menu on each of them.

Accounts owns /settings/ (profile, password); apps above it add their own
pages (the assistant's preferences, …) from their `registrations` module, because
accounts sits below them and cannot import them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from apps.accounts.models import User


@dataclass(frozen=True)
class SettingsPage:
    label: str
    url_name: str
    order: int = 50
    visible: Callable[[User], bool] = field(default=lambda user: True, compare=False)


PAGES: list[SettingsPage] = [
    SettingsPage("Profile and password", "accounts:preferences", 0),
    SettingsPage("Things Jarvis remembers about you", "accounts:memories", 20),
]


def settings_page_register(page: SettingsPage) -> None:
    if page not in PAGES:
        PAGES.append(page)
        PAGES.sort(key=lambda p: p.order)


def settings_pages_for(user: User) -> list[SettingsPage]:
    return [page for page in PAGES if page.visible(user)]
