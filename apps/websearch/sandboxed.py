"""What web search runs in a sandbox child (apps.core.sandbox): reading a
result page's main content. A page from the web is untrusted bytes, so it is
parsed only in a child with limits, never in the web process."""

from __future__ import annotations

import lxml.etree
import lxml.html
import trafilatura

from apps.core.sandbox import sandbox_task

# Tags whose text no reader sees: a favourite place for instructions aimed at a model.
_INVISIBLE = ("script", "style", "noscript", "template", "iframe", "svg")


@sandbox_task("websearch.extract")
def extract_pages(params: dict, blobs: list[bytes]) -> tuple[dict, list[bytes]]:
    """The main text of each page (blob i is page i's HTML), cut to
    params["max_chars"]; "" for a page with nothing readable."""
    limit = int(params["max_chars"])
    texts = [_main_text(blob, url, limit) for blob, url in zip(blobs, params["urls"], strict=True)]
    return {"texts": texts}, []


def _main_text(data: bytes, url: str, limit: int) -> str:
    try:
        root = lxml.html.document_fromstring(data)
    except (ValueError, lxml.etree.LxmlError):
        return ""
    for element in list(root.iter(*_INVISIBLE)):
        element.drop_tree()
    try:
        text = trafilatura.extract(
            root,
            url=url or None,
            output_format="markdown",
            include_links=False,
            include_images=False,
            include_comments=False,
            include_tables=True,
        )
    except (ValueError, TypeError, lxml.etree.LxmlError):
        text = None
    if not text:
        text = " ".join(root.text_content().split())
    return text.strip()[:limit]
