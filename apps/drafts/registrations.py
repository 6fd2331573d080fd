"""What drafts adds to the chats, which cannot import it, imported once by
apps.core's ready(): the drafts tools the chat's tool loop offers."""

from __future__ import annotations

from apps.chats.tools import register
from apps.drafts.tools import DRAFT_TOOLS

for tool in DRAFT_TOOLS:
    register(tool)
