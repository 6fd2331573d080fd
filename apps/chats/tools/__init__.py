"""What the model may do, and only as the asking person.

Every tool runs with the person's permissions through the library's
selectors; on a cloud model every read is filtered to cloud-allowed content
inside `search()` and the document lookups, never by the prompt. Passages are
numbered across the turn; the model cites them as [n] and the runner checks
each number against this list. Retrieved text reaches the model wrapped as
data, each passage labelled with its date and whether it is the latest
version.

The model's whole write surface here is `add_document`,
`update_document_metadata` and the confirmation card of `remove_document`
(only the person's click removes; never a file); drafts and agents add their
own tools through the registry.

registry      Tool, register(), tool_specs(), run_tool()
context       TurnContext, Passage, the errors, the retrieved-data wrapper
library       search_notes, get_document, list_documents, library_stats, add/update/remove
conversation  search_chat_history, use_own_knowledge
projects      list_projects, get_project_status (the project registry, for status questions)
memory        remember (a card; only the person's Keep stores a memory)
ask           ask_user (questions on one card per round; the reply waits for the answers)
"""

from apps.chats.tools import (  # noqa: F401  (importing registers them)
    ask,
    conversation,
    library,
    memory,
    projects,
)
from apps.chats.tools.context import (
    LOCAL_ONLY_STOP,
    MIXED_CAVEAT,
    WRAPPER_LINES,
    Passage,
    PrivacyStop,
    ToolError,
    TurnContext,
    as_read,
    passage_from_result,
)
from apps.chats.tools.registry import (
    SEARCH_ONLY,
    TOOLS,
    Tool,
    register,
    run_tool,
    tool_spec,
    tool_specs,
)

__all__ = [
    "LOCAL_ONLY_STOP",
    "MIXED_CAVEAT",
    "SEARCH_ONLY",
    "TOOLS",
    "WRAPPER_LINES",
    "Passage",
    "PrivacyStop",
    "Tool",
    "ToolError",
    "TurnContext",
    "as_read",
    "passage_from_result",
    "register",
    "run_tool",
    "tool_spec",
    "tool_specs",
]
