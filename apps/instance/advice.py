"""Advice shown at the top of the instance settings page in admin.

Instance sits below the apps whose state an admin may need to hear about
(the library knows which languages its notes are in), so they register a
callable here from their `registrations` module; each returns the advice as
text, or None when there is nothing to say.
"""

from __future__ import annotations

from collections.abc import Callable

_PROVIDERS: list[Callable[[], object | None]] = []


def settings_advice_register(provider: Callable[[], object | None]) -> None:
    if provider not in _PROVIDERS:
        _PROVIDERS.append(provider)


def settings_advice() -> list[str]:
    return [str(advice) for provider in _PROVIDERS if (advice := provider()) is not None]
