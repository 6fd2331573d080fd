"""Asking a search provider: SearXNG's JSON API or Brave Search's API, one
shape for both (`WebResult`).

The provider's address is the admin's (like an LLM connection), so it is not
put through the SSRF guard: a household's SearXNG usually lives on the home
network, which the guard refuses by design. What comes back is still bounded:
a time limit for the whole answer (`ProviderTimeout` names it, so the model
can tell the person), a size cap while it streams, and only http(s) result
URLs are kept. The API key travels in a header and appears in no message or
log line.
"""

from __future__ import annotations

import html
import json
import logging
import re
import time
from dataclasses import dataclass

import httpx
from django.conf import settings

from apps.core.errors import JarvisError
from apps.websearch.models import SearchProvider

logger = logging.getLogger(__name__)

MAX_ANSWER_BYTES = 2 * 1024 * 1024
TITLE_CHARS, SNIPPET_CHARS, URL_CHARS = 200, 500, 2000
_TAGS = re.compile(r"<[^>]{0,200}>")
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class WebResult:
    title: str
    url: str
    snippet: str


class ProviderError(JarvisError):
    """The provider could not be asked, or its answer could not be read. The
    message is safe to show (and to give the model)."""


class ProviderTimeout(ProviderError):
    pass


def timeout_message(seconds: float) -> str:
    return f"the web search provider did not answer within {seconds:g} s"


def provider_search(provider: SearchProvider, query: str) -> list[WebResult]:
    """The provider's top results for `query` (at most `provider.max_results`)."""
    if provider.kind == SearchProvider.Kind.BRAVE:
        key = provider.api_key
        if not key:
            raise ProviderError("the web search provider has no API key (an admin can add one)")
        answer = _get(
            provider,
            params={"q": query, "count": provider.max_results},
            headers={"X-Subscription-Token": key},
        )
        items = ((answer.get("web") or {}).get("results")) or []
        results = [_result(i.get("title"), i.get("url"), i.get("description")) for i in items]
    else:
        answer = _get(provider, params={"q": query, "format": "json"}, headers={})
        items = answer.get("results") or []
        results = [_result(i.get("title"), i.get("url"), i.get("content")) for i in items]
    kept = [r for r in results if r is not None]
    return _unique(kept)[: provider.max_results]


def _get(provider: SearchProvider, *, params: dict, headers: dict) -> dict:
    url = provider.url if provider.kind == SearchProvider.Kind.BRAVE else f"{provider.url}/search"
    seconds = float(provider.timeout_seconds)
    deadline = time.monotonic() + seconds
    request_headers = {
        "Accept": "application/json",
        "User-Agent": settings.FETCH_USER_AGENT,
        **headers,
    }
    try:
        with (
            httpx.Client(trust_env=False, timeout=httpx.Timeout(seconds)) as client,
            client.stream("GET", url, params=params, headers=request_headers) as response,
        ):
            if response.status_code != 200:
                raise ProviderError(_status_problem(provider, response.status_code))
            body = bytearray()
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > MAX_ANSWER_BYTES:
                    raise ProviderError("the web search provider's answer was too large")
                if time.monotonic() > deadline:
                    raise ProviderTimeout(timeout_message(seconds))
    except httpx.TimeoutException:
        raise ProviderTimeout(timeout_message(seconds)) from None
    except httpx.HTTPError as exc:
        # The exception's text names the URL (with the query), never the key header.
        logger.info("web search provider %s failed: %s", provider.name, type(exc).__name__)
        raise ProviderError("the web search provider could not be reached") from None
    if time.monotonic() > deadline:
        raise ProviderTimeout(timeout_message(seconds))
    try:
        answer = json.loads(bytes(body))
    except (ValueError, UnicodeDecodeError):
        raise ProviderError("the web search provider's answer was not JSON") from None
    if not isinstance(answer, dict):
        raise ProviderError("the web search provider's answer was not understood")
    return answer


def _status_problem(provider: SearchProvider, status: int) -> str:
    if status == 403 and provider.kind == SearchProvider.Kind.SEARXNG:
        return (
            "the SearXNG instance refused the JSON format (HTTP 403): list json under "
            "search: formats in its settings.yml"
        )
    if status in (401, 403) and provider.kind == SearchProvider.Kind.BRAVE:
        return f"the web search provider refused the API key (HTTP {status})"
    if status == 429:
        return "the web search provider says too many searches were made (HTTP 429)"
    return f"the web search provider answered HTTP {status}"


def _clean(value, limit: int) -> str:
    text = html.unescape(_TAGS.sub("", str(value or "")))
    return _SPACES.sub(" ", text).strip()[:limit]


def _result(title, url, snippet) -> WebResult | None:
    url = str(url or "").strip()
    # Only web addresses: a javascript: or file: "result" is never shown or fetched.
    if not re.match(r"^https?://", url, re.I) or len(url) > URL_CHARS:
        return None
    return WebResult(
        title=_clean(title, TITLE_CHARS) or url, url=url, snippet=_clean(snippet, SNIPPET_CHARS)
    )


def _unique(results: list[WebResult]) -> list[WebResult]:
    seen, kept = set(), []
    for result in results:
        if result.url not in seen:
            seen.add(result.url)
            kept.append(result)
    return kept
