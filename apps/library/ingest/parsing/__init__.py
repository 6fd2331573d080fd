"""Turning file bytes into a ParsedDocument: text chunks plus what the file says about itself."""
