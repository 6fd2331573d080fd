"""Web search for chats: providers an admin configures (SearXNG, a commercial API), the search tool, web citations."""
