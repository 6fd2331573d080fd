"""Jarvis as an MCP server: other assistants read the library through it."""

# Where the endpoint is mounted (jarvis_site.asgi, apps.mcp.http). Kept here so
# the pages that show it (views) need not import the MCP SDK that http.py loads.
MCP_PATH = "/mcp/"
