"""The `web_search` tool: the model's query goes to the configured provider,
the top result pages are read (SSRF-guarded, capped, in a sandbox), and what
comes back is numbered and cited like the notes' passages but marked as web
sources, with URL and fetch time.

Offered only when a provider is configured and the person has the "use web
search" permission (both read fresh at each turn and each call). Privacy: in
a private chat (or a turn that has read local-only notes) nothing is sent by
the model alone. The tool is offered there only when the person ticked Web
for the message, and the loop holds each call on a card that shows the query
(apps.websearch.cards): the reply waits, and the call runs only when they
click Search, with exactly the arguments the card showed. Run there without
that yes (the round read local-only notes after it was decided), it refuses.
"""

from __future__ import annotations

import logging
import re
from datetime import UTC

from django.utils import timezone

from apps.chats.approvals import APPROVED
from apps.chats.tools.context import ToolError, TurnContext, WebPassage, WebSource, wrap
from apps.chats.tools.registry import Tool, tool_spec
from apps.core.fetch import FetchRefused, check_url
from apps.websearch.models import SearchProvider
from apps.websearch.pages import pages_read
from apps.websearch.providers import ProviderError, ProviderTimeout, WebResult, provider_search
from apps.websearch.selectors import active_provider, may_search_web, web_search_available

logger = logging.getLogger(__name__)

NAME = "web_search"
QUERY_CHARS = 300
UNAVAILABLE = "Web search is not available: no provider is configured, or you may not use it."
NOT_REQUESTED = (
    "Not searched: this chat is private (it has read notes kept local), so the web is "
    "searched only when the person ticks Web for a message. Answer without the web, and "
    "tell them they can tick Web and ask again."
)
NOT_SHOWN = (
    "Not searched: this turn has read notes kept local, so the person must see a web query "
    "before it is sent. Call web_search again, on its own, to show them the query."
)
FOOTER = (
    "These are web pages (not the person's notes), fetched just now. Cite the ones you use "
    "by number, like [1], and say that the information comes from the web."
)
TIMED_OUT = "{reason}. Tell the person the web search did not answer in time, and go on without it."
FAILED = "The web search failed: {reason}. Tell the person, and go on without it."


def clean_query(value) -> str:
    query = " ".join(str(value or "").split())[:QUERY_CHARS]
    if not query:
        raise ToolError("Give a query: a few words to search the web for.")
    return query


def offered(ctx: TurnContext) -> bool:
    if not web_search_available(user=ctx.user):
        return False
    # A private chat: only for a message the person ticked Web on.
    return ctx.web_requested if ctx.chat.private else True


def web_search(ctx: TurnContext, args: dict) -> str:
    query = clean_query(args.get("query"))
    provider = active_provider()
    if provider is None or not may_search_web(user=ctx.user):
        raise ToolError(UNAVAILABLE)
    # Private: only the person's Search on the card that showed this query
    # (the loop sets APPROVED while that call runs) lets it leave.
    if (ctx.chat.private or ctx.saw_local_only) and not ctx.extras.get(APPROVED):
        raise ToolError(NOT_SHOWN if ctx.web_requested else NOT_REQUESTED)
    return _search(ctx, provider, query)


def _search(ctx: TurnContext, provider: SearchProvider, query: str) -> str:
    try:
        results = provider_search(provider, query)
    except ProviderTimeout as exc:
        # Said under the reply too, whatever the model makes of the error.
        ctx.caveat(f"Web search: {exc}; this answer is without it.")
        raise ToolError(TIMED_OUT.format(reason=str(exc).capitalize())) from None
    except ProviderError as exc:
        ctx.caveat(f"Web search failed: {exc}.")
        raise ToolError(FAILED.format(reason=exc)) from None
    searched_at = timezone.now()
    head = ""
    usable, refused = [], 0
    for result in results:
        try:
            check_url(result.url)  # a literal private address is refused without DNS
        except FetchRefused:
            refused += 1
            continue
        usable.append(result)
    reads = pages_read(
        [r.url for r in usable[: provider.pages_to_read]],
        max_bytes=provider.max_page_kb * 1024,
        timeout=provider.timeout_seconds,
    )
    read_of = {read.url: read for read in reads}
    lines = []
    for result in usable:
        read = read_of.get(result.url)
        if read is not None and read.refused:
            refused += 1
            continue
        passage = ctx.number_web(_passage(provider, result, read, searched_at))
        lines.append(f"{passage.label()}\n{_body(result, read)}")
    if refused:
        head += (
            f"{refused} result{'s' if refused != 1 else ''} pointed at an address Jarvis does "
            "not fetch (this machine or a private network) and "
            f"{'were' if refused != 1 else 'was'} left out.\n"
        )
    if not lines:
        return f"{head}The web search for {query!r} found nothing usable."
    return head + wrap(lines, FOOTER)


def _passage(provider, result: WebResult, read, searched_at) -> WebPassage:
    fetched = read.fetched_at if read is not None and read.fetched_at else searched_at
    source = WebSource(
        title=result.title,
        url=result.url,
        text=(read.text if read is not None and read.text else result.snippet),
        fetched_at=fetched.astimezone(UTC).isoformat(timespec="seconds"),
        site=_site(result.url),
        provider=provider.name,
    )
    return WebPassage(result=source)


def _body(result: WebResult, read) -> str:
    if read is not None and read.text:
        return read.text
    why = f" (the page was not read: {read.problem})" if read is not None and read.problem else ""
    return f"Search snippet{why}: {result.snippet or '(none)'}"


def _site(url: str) -> str:
    match = re.match(r"^https?://([^/:?#]+)", url, re.I)
    return match.group(1).lower() if match else ""


TOOL = Tool(
    tool_spec(
        NAME,
        "Search the web for current or outside information the notes cannot hold (news, "
        "opening times, timetables, recipes, prices, anything public). Returns the top pages, "
        "read, numbered like passages: cite them as [n]. Write a short search-engine query in "
        "your own words; never put anything from the person's notes in it.",
        {"query": {"type": "string", "description": "a short web search query"}},
        ["query"],
    ),
    web_search,
    offered,
)
