"""Permission flags: feature switches granted through groups.

Checked with `user.has_perm(FLAG)`; Django's ModelBackend resolves them as
the union of the user's own and their groups' permissions, and superusers pass.
"""

from __future__ import annotations

USE_CLOUD_MODELS = "accounts.use_cloud_models"
USE_AGENT_CHATS = "accounts.use_agent_chats"
MANAGE_FOLDER_SOURCES = "accounts.manage_folder_sources"
RUN_PAPER_DIGEST = "accounts.run_paper_digest"

ALL_FLAGS = (USE_CLOUD_MODELS, USE_AGENT_CHATS, MANAGE_FOLDER_SOURCES, RUN_PAPER_DIGEST)


def codename(flag: str) -> str:
    return flag.split(".", 1)[1]
