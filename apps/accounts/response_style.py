"""A person's response style: the words added to the system prompt for them,
with the default everyone starts from. An override equal to the default is
stored as "" so an upgrade's better default reaches everyone who never changed it."""

from __future__ import annotations

from apps.accounts.models import User
from apps.instance.prompts import stored_value

DEFAULT_RESPONSE_STYLE = """\
Be concise: lead with the answer, then the details that matter. Use plain \
language and explain jargon when you must use it. Use Markdown where it helps \
(short lists, tables for comparisons, code blocks for code and commands), not for \
a one-line answer. Answer in the language the question was asked in.
"""


def response_style_for(user: User) -> str:
    return user.response_style or DEFAULT_RESPONSE_STYLE


def set_response_style(user: User, text: str) -> None:
    user.response_style = stored_value(text, DEFAULT_RESPONSE_STYLE)
    user.save(update_fields=["response_style"])


def revert_response_style(user: User) -> None:
    set_response_style(user, "")
