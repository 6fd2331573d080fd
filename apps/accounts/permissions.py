"""Permission flags: feature switches granted through groups.

Checked with `user.has_perm(FLAG)`; Django's ModelBackend resolves them as
the union of the user's own and their groups' permissions, and superusers pass.
"""

from __future__ import annotations

USE_CLOUD_MODELS = "accounts.use_cloud_models"
USE_AGENT_CHATS = "accounts.use_agent_chats"
MANAGE_FOLDER_SOURCES = "accounts.manage_folder_sources"
RUN_PAPER_DIGEST = "accounts.run_paper_digest"
# Read by apps.websearch; declared here like the agents' flag, because the
# group page (and this floor) cannot import the apps above it.
USE_WEB_SEARCH = "accounts.use_web_search"

ALL_FLAGS = (
    USE_CLOUD_MODELS,
    USE_AGENT_CHATS,
    MANAGE_FOLDER_SOURCES,
    RUN_PAPER_DIGEST,
    USE_WEB_SEARCH,
)


def codename(flag: str) -> str:
    return flag.split(".", 1)[1]


# What each flag lets a group's members do, as the group page shows it: a short
# label and one sentence an admin can decide on without reading code.
FLAG_TEXT = {
    USE_CLOUD_MODELS: (
        "Use cloud models",
        "Members may chat with models hosted by a cloud provider; their messages "
        "and the passages sent with them leave this machine.",
    ),
    USE_AGENT_CHATS: (
        "Use agent chats",
        "Members may start agent chats that run commands on machines through "
        "shared SSH profiles, and open a terminal on them.",
    ),
    MANAGE_FOLDER_SOURCES: (
        "Manage folder sources",
        "Members may add folders from this server's vaults folder to the library "
        "as sources, and change or remove them.",
    ),
    RUN_PAPER_DIGEST: (
        "Run the paper digest",
        "Members may set up the paper digest, which fetches new papers on their "
        "topics and summarises them with a model.",
    ),
    USE_WEB_SEARCH: (
        "Use web search",
        "Members may let chats search the web through the configured provider; the "
        "model's search words leave this machine (in a private chat only after the "
        "member sees them and clicks Search).",
    ),
}
