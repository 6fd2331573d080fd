"""Outside tools for chats: remote MCP servers (the `mcp` SDK's client) and admin-defined
HTTP tools."""
