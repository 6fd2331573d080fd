"""Voice: dictation into the composer and reading a reply aloud, through
OpenAI-compatible audio endpoints."""
