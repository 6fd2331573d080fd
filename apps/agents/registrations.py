"""What agents adds to the registries of the floors below it, which cannot
import it, imported once by apps.core's ready(): the Settings page "SSH
profiles" (only for people allowed agent chats), its parts of the chat page
(page hooks), the agent chat kind of `manage.py chat`, the agent tools, the
approval policy and the prompt's paragraph about the remote machine. (Its
`signals`, which end a terminal when its profile or chat changes, are
connected by the same discovery.)"""

from __future__ import annotations

from apps.accounts.settings_pages import SettingsPage, settings_page_register
from apps.agents.chat_page import HOOKS
from apps.agents.policy import agent_prompt, policy_for_chat
from apps.agents.selectors import may_use_agents
from apps.agents.services import agent_chat_from_options
from apps.agents.tools import register_all as register_tools
from apps.chats.approvals import policy_provider_register
from apps.chats.kinds import chat_kind_register, prompt_part_register
from apps.chats.page_hooks import chat_page_hook_register

settings_page_register(
    SettingsPage(
        "SSH profiles", "ssh_profiles:list", 30, visible=lambda user: may_use_agents(user=user)
    )
)
for hook in HOOKS:
    chat_page_hook_register(hook)
chat_kind_register("agent", agent_chat_from_options)
# The agent chat's tools, its approval mode (applied by the chat loop to
# every call) and what the system prompt says about the remote machine.
register_tools()
policy_provider_register(policy_for_chat)
prompt_part_register(agent_prompt)
