"""Template filters of web search (the fetch time of a web source)."""
