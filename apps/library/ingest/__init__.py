"""How files become documents: walk a folder (`walk`), type the bytes
(`filetypes`), parse them (`parsing/`), date and version them (`naming`,
`versions`), chunk, embed and write them (`pipeline`), and keep a folder in step
(`sync`). Originals Jarvis keeps a copy of live in `storage`; papers come from
arXiv through `arxiv`."""
