"""The one HTTP path both adapters go through (`post_sse`, `get_json`) and the
loop that turns a server-sent event stream into reply events (`stream_reply`).

Every chat request is streamed, whether or not anyone watches the tokens: a
stream is what makes a turn stoppable. Cancelling the task that iterates it
raises CancelledError inside the read, which unwinds `client.stream(...)` and
closes the connection; closing it is the only "stop generating" signal these
APIs have.
"""

from __future__ import annotations

import contextlib
import functools
import json
import ssl
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import httpx

from apps.llm.config import ProviderConfig
from apps.llm.errors import (
    ProviderError,
    error_for_exception,
    error_for_status,
    failure,
    logged,
    server_detail,
)

ERROR_BODY_LIMIT = 64 * 1024


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    # Building a context (loading the CA bundle) costs milliseconds; one for all clients.
    return httpx.create_ssl_context()


def make_client(config: ProviderConfig) -> httpx.AsyncClient:
    """A client for one provider call. No environment proxies or .netrc (trust_env
    off: a netrc entry would add credentials nobody configured here), no redirects
    (following one would carry the key to wherever it points)."""
    return httpx.AsyncClient(
        timeout=httpx.Timeout(config.timeout),
        verify=_ssl_context(),
        trust_env=False,
        follow_redirects=False,
    )


def _client_for(
    config: ProviderConfig, client: httpx.AsyncClient | None
) -> contextlib.AbstractAsyncContextManager[httpx.AsyncClient]:
    return contextlib.nullcontext(client) if client is not None else make_client(config)


async def _read_capped(response: httpx.Response) -> bytes:
    body = b""
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) >= ERROR_BODY_LIMIT:
            break
    return body[:ERROR_BODY_LIMIT]


@dataclass(frozen=True)
class WireRequest:
    """One adapter's request for a reply: where to POST what."""

    url: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass(frozen=True)
class SseEvent:
    event: str  # "" when the server named none
    data: str


def _is_waiting_default(event: SseEvent) -> bool:
    return False


class _SseParser:
    """Server-sent events per the WHATWG rules: `field: value` lines, one optional
    space after the colon, the `data` lines of one event joined by newlines, a
    blank line ends an event, a line starting with `:` is a comment (keep-alive).

    Until the first event that is not `waiting` (the first real token), a
    keep-alive arriving after `deadline` counts as a timeout: a server that only
    says "still working" has not answered. Silence is httpx's read timeout."""

    def __init__(self, *, deadline: float, waiting: Callable[[SseEvent], bool]) -> None:
        self.deadline = deadline
        self.waiting = waiting
        self.answered = False  # a real token has arrived
        self._name = ""
        self._data: list[str] = []

    def _check_deadline(self) -> None:
        if not self.answered and time.monotonic() > self.deadline:
            raise httpx.ReadTimeout("no tokens before the deadline")

    def line(self, line: str) -> SseEvent | None:
        if not line:
            return self.end()
        if line.startswith(":"):
            self._check_deadline()
            return None
        field_name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field_name == "data":
            self._data.append(value)
        elif field_name == "event":
            self._name = value
        return None

    def end(self) -> SseEvent | None:
        """The event the lines so far make, if any (called at a blank line and at EOF,
        where an event with no blank line after it is delivered all the same)."""
        event = SseEvent(self._name, "\n".join(self._data)) if self._data else None
        self._name, self._data = "", []
        if event is not None and not self.answered:
            if self.waiting(event):
                self._check_deadline()
            else:
                self.answered = True
        return event


async def post_sse(
    config: ProviderConfig,
    url: str,
    *,
    headers: dict[str, str],
    body: dict[str, Any],
    client: httpx.AsyncClient | None = None,
    waiting: Callable[[SseEvent], bool] = _is_waiting_default,
) -> AsyncIterator[SseEvent]:
    """POST `body` and yield the server-sent events of the answer. Raises
    ProviderError for a refused request, a non-2xx answer (with the server's
    explanation), a timeout, or a connection lost on the way. Use it under
    `contextlib.aclosing` when you may stop iterating early."""
    parser = _SseParser(deadline=time.monotonic() + config.timeout, waiting=waiting)
    problem: ProviderError | None = None
    answered = False
    try:
        async with (
            _client_for(config, client) as http,
            http.stream("POST", url, headers=headers, json=body) as response,
        ):
            answered = True
            content_type = response.headers.get("content-type", "")
            if not 200 <= response.status_code < 300:
                body_bytes = await _read_capped(response)
                problem = error_for_status(config, response.status_code, body_bytes)
            elif content_type.startswith("application/json"):
                # A proxy or server that ignored `stream: true`, or an error dressed as a 200.
                detail = server_detail(await _read_capped(response), config)
                problem = failure(
                    config,
                    f"{config.host} answered without streaming" + (f": {detail}" if detail else ""),
                )
            elif "html" in content_type:
                # A web page (a proxy's login or error page, a web UI at the base URL).
                problem = failure(
                    config,
                    f"{config.host} answered with a web page ({content_type.split(';')[0]}), "
                    f"not a stream of events: check that the base URL is the API's "
                    f"(often ending in /v1), not a web interface's",
                )
            else:
                async for line in response.aiter_lines():
                    event = parser.line(line)
                    if event is not None:
                        yield event
                event = parser.end()
                if event is not None:
                    yield event
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        problem = error_for_exception(config, exc, answered=answered, streaming=parser.answered)
    if problem is not None:
        raise logged(config, problem)


async def get_json(
    config: ProviderConfig,
    url: str,
    *,
    headers: dict[str, str],
    client: httpx.AsyncClient | None = None,
    purpose: str = "models",
    post: dict[str, Any] | None = None,
) -> Any:
    """GET `url` (or POST the JSON `post` to it: Ollama's /api/show) and parse
    its JSON, with the same errors as `post_sse`."""
    problem: ProviderError | None = None
    result: Any = None
    answered = False
    try:
        async with _client_for(config, client) as http:
            if post is None:
                response = await http.get(url, headers=headers)
            else:
                response = await http.post(url, headers=headers, json=post)
            answered = True
            if not 200 <= response.status_code < 300:
                problem = error_for_status(
                    config,
                    response.status_code,
                    response.content[:ERROR_BODY_LIMIT],
                    purpose=purpose,
                )
            else:
                try:
                    result = response.json()
                except ValueError:
                    problem = failure(config, f"{config.host} did not answer with JSON at {url}")
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        problem = error_for_exception(config, exc, answered=answered, streaming=False)
    if problem is not None:
        raise logged(config, problem)
    return result


EMPTY_REPLY = (
    "{host} sent an empty reply (no text, no tool call): the model may not be loaded "
    "or may have failed; its server's log says why"
)


def empty_reply(config: ProviderConfig) -> ProviderError:
    """The error for a 200 stream with nothing in it (no events, or only its end)."""
    return logged(config, failure(config, EMPTY_REPLY.format(host=config.host), retryable=True))


def cut_off(config: ProviderConfig) -> ProviderError:
    """The error for a stream that ended cleanly but before the reply did."""
    message = f"the connection dropped mid-reply ({config.host}): the stream ended before the reply"
    return logged(config, failure(config, message, retryable=True))


def parse_json_event(config: ProviderConfig, data: str) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        raise failure(
            config,
            f"{config.host} sent a reply that is not valid JSON: {data[:80]!r}",
            retryable=True,
        ) from None


def merge_extra(body: dict[str, Any], config: ProviderConfig) -> dict[str, Any]:
    if config.extra:
        body.update(config.extra)
    return body
