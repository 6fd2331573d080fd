"""How files become documents: walk a folder (`walk`), type the bytes
(`filetypes`), parse them (`parsing/`), chunk, embed and write them
(`pipeline`), and keep a folder in step (`sync`), which dates and versions
them with the rules of `apps.library.versions`. Originals Jarvis keeps a copy
of live in `storage`; papers come from arXiv through `arxiv`."""
