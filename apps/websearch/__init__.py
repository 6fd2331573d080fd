"""Web search for chats: the provider an admin configures, the tool, web citations.

SearXNG's JSON API or Brave Search's API (models, providers), the result
pages read through the SSRF guard (pages, sandboxed), the `web_search` tool
(tool), the composer's Web toggle (chat_page) and a private chat's card
that shows the query before it is sent (cards). See docs/web-search.md.
"""
