"""What every provider shares: configuration, the events a reply streams as, errors,
redaction, and the one HTTP path (`post_sse`, `get_json`) both adapters go through.

Every chat request is streamed, whether or not anyone watches the tokens: a
stream is what makes a turn stoppable. Cancelling the task that iterates it
raises CancelledError inside the read, which unwinds `client.stream(...)` and
closes the connection; closing it is the only "stop generating" signal these
APIs have.

Errors are `ProviderError` with a message a person can act on ("could not
reach localhost:11434", "api.anthropic.com rejected the API key (HTTP 401)").
The API key never appears in one: every message is passed through `redact`,
and ProviderError is raised outside the `except` that caught the httpx error,
so no traceback carries the original (h11, for one, puts an illegal header
value, key included, into its message).
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import re
import socket
import ssl
import time
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, quote_plus

import httpx

from apps.chats.transcript import Block, Turn
from apps.core.errors import JarvisError

logger = logging.getLogger("apps.chats.providers")

REDACTED = "[redacted]"
ERROR_BODY_LIMIT = 64 * 1024
DETAIL_LIMIT = 300


# --- configuration -----------------------------------------------------------------------


@dataclass(frozen=True)
class ProviderConfig:
    kind: str  # "openai" (any OpenAI-compatible server) | "anthropic"
    base_url: str  # "http://localhost:11434/v1", "https://openrouter.ai/api/v1", "https://api.anthropic.com"
    api_key: str | None = field(repr=False)  # never in a repr, so never in a log line
    model: str
    timeout: float = 60.0  # connect, each read, and the wait for the first token
    max_tokens: int = 4096
    # Extra top-level request fields, merged last: {"thinking": {...}} for
    # Anthropic, {"provider": {"data_collection": "deny"}} for OpenRouter.
    extra: dict[str, Any] | None = field(default=None, hash=False)

    @property
    def host(self) -> str:
        return host_label(self.base_url)


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any]  # a JSON schema ({"type": "object", "properties": ...})


# --- events --------------------------------------------------------------------------------


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class ReasoningDelta:
    text: str


@dataclass(frozen=True)
class ToolCallStarted:
    """A call's name is known (its arguments are still streaming): for the UI."""

    id: str
    name: str


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # the JSON text exactly as the model produced it, possibly malformed


@dataclass(frozen=True)
class OpaqueBlock:
    """Provider data to echo back verbatim on the same model (Anthropic thinking)."""

    provider: str
    model: str
    data: dict[str, Any]


@dataclass(frozen=True)
class Usage:
    input_tokens: int | None
    output_tokens: int | None
    cost: float | None = None  # in the provider's currency (OpenRouter: credits, i.e. USD)


@dataclass(frozen=True)
class Finished:
    stop_reason: str  # "stop" | "tool_calls" | "length" | whatever else the server said


Event = TextDelta | ReasoningDelta | ToolCallStarted | ToolCall | OpaqueBlock | Usage | Finished


@dataclass
class ReplyBuilder:
    """Folds a reply's events into transcript blocks (text and reasoning deltas
    joined into one block per run, calls and opaque blocks in arrival order)."""

    blocks: list[Block] = field(default_factory=list)
    usage: Usage | None = None
    stop_reason: str | None = None

    def feed(self, event: Event) -> None:
        if isinstance(event, TextDelta | ReasoningDelta):
            kind = "text" if isinstance(event, TextDelta) else "reasoning"
            if self.blocks and self.blocks[-1]["type"] == kind:
                self.blocks[-1]["text"] += event.text
            else:
                self.blocks.append({"type": kind, "text": event.text})
        elif isinstance(event, ToolCall):
            self.blocks.append(
                {
                    "type": "tool_call",
                    "id": event.id,
                    "name": event.name,
                    "arguments": event.arguments,
                }
            )
        elif isinstance(event, OpaqueBlock):
            self.blocks.append(
                {
                    "type": "opaque",
                    "provider": event.provider,
                    "model": event.model,
                    "data": event.data,
                }
            )
        elif isinstance(event, Usage):
            self.usage = event
        elif isinstance(event, Finished):
            self.stop_reason = event.stop_reason

    @property
    def text(self) -> str:
        return "".join(b["text"] for b in self.blocks if b["type"] == "text")

    @property
    def reasoning(self) -> str:
        return "".join(b["text"] for b in self.blocks if b["type"] == "reasoning")

    @property
    def tool_calls(self) -> list[Block]:
        return [b for b in self.blocks if b["type"] == "tool_call"]

    def turn(self) -> Turn:
        return {"role": "assistant", "blocks": [dict(b) for b in self.blocks]}


# --- errors and redaction ---------------------------------------------------------------------


class ProviderError(JarvisError):
    """A model request failed. `message` is safe to show (secrets redacted);
    `status` is the HTTP status when there was one; `retryable` says whether
    sending the same request again later may work (rate limits, server errors,
    timeouts, dropped connections) as opposed to needing a change (key, model, URL)."""

    def __init__(self, message: str, *, status: int | None = None, retryable: bool = False):
        super().__init__(message)
        self.message = message
        self.status = status
        self.retryable = retryable

    def __repr__(self) -> str:
        return f"ProviderError({self.message!r}, status={self.status}, retryable={self.retryable})"


def _forms(secret: str) -> set[str]:
    return {
        secret,
        quote(secret, safe=""),
        quote_plus(secret),
        json.dumps(secret)[1:-1],
        secret.encode("unicode_escape").decode("ascii"),
        repr(secret)[1:-1],
    }


def redact(text: str, secrets: Iterable[str | None]) -> str:
    """`text` with every secret replaced by "[redacted]": as written, URL-encoded,
    JSON- or repr-escaped, and with an authorisation scheme in front of it
    ("Bearer <key>" becomes "[redacted]" as a whole)."""
    forms: set[str] = set()
    for secret in secrets:
        if secret and secret.strip():
            forms |= _forms(secret) | _forms(secret.strip())
    forms.discard("")
    for form in sorted(forms, key=len, reverse=True):
        text = re.sub(rf"(?i)\b(?:bearer|basic|token)\s+{re.escape(form)}", REDACTED, text)
        text = text.replace(form, REDACTED)
    return text


def secrets_of(config: ProviderConfig) -> list[str]:
    secrets = [config.api_key] if config.api_key else []
    with contextlib.suppress(httpx.InvalidURL):
        password = httpx.URL(config.base_url).password
        if password:
            secrets.append(password)
    return secrets


def host_label(base_url: str) -> str:
    """host[:port] of a base URL, without any credentials in it."""
    try:
        url = httpx.URL(base_url)
    except httpx.InvalidURL:
        return "the configured server"
    if not url.host:
        return "the configured server"
    host = f"[{url.host}]" if ":" in url.host else url.host
    return f"{host}:{url.port}" if url.port else host


def _seconds(value: float) -> str:
    return f"{value:g} s"


def _fail(config: ProviderConfig, message: str, **kwargs: Any) -> ProviderError:
    return ProviderError(redact(message, secrets_of(config)), **kwargs)


def logged(config: ProviderConfig, error: ProviderError) -> ProviderError:
    """`error`, after one log line saying what failed (the message is redacted already)."""
    logger.info("%s request to %s failed: %s", config.kind, config.host, error.message)
    return error


def checked_key(config: ProviderConfig) -> str | None:
    """The key to send, or a ProviderError for one no HTTP header can carry
    (raised here because httpx/h11 would quote the key in their error)."""
    if not config.api_key or not config.api_key.strip():
        return None
    key = config.api_key.strip()
    if any(not ("\x21" <= ch <= "\x7e") for ch in key):
        raise ProviderError(
            "the API key contains spaces, line breaks or non-ASCII characters; enter it again"
        )
    return key


def _detail(body: bytes, config: ProviderConfig) -> str:
    """The server's own explanation, from the usual error shapes, shortened."""
    text = body.decode("utf-8", errors="replace").strip()
    found: Any = None
    with contextlib.suppress(ValueError):
        data = json.loads(text)
        if isinstance(data, dict):
            error = data.get("error", data)
            if isinstance(error, dict):
                found = error.get("message") or error.get("detail") or error.get("type")
            elif isinstance(error, str):
                found = error
            found = found or data.get("message") or data.get("detail")
    detail = str(found) if found else ("" if text.startswith(("<", "{")) else text)
    detail = " ".join(redact(detail, secrets_of(config)).split())
    return detail[:DETAIL_LIMIT] + ("…" if len(detail) > DETAIL_LIMIT else "")


def error_for_status(
    config: ProviderConfig, status: int, body: bytes, *, purpose: str = "chat"
) -> ProviderError:
    host = config.host
    detail = _detail(body, config)
    if 300 <= status < 400:
        message = f"{host} answered with a redirect (HTTP {status}); check the base URL"
        retryable = False
    elif status in (401, 403):
        message = f"{host} rejected the API key (HTTP {status})"
        retryable = False
    elif status == 404:
        if purpose == "models":
            message = f"{host} has no model list at this base URL (HTTP 404)"
        else:
            message = (
                f'{host} does not know the model "{config.model}", '
                "or the base URL is wrong (HTTP 404)"
            )
        retryable = False
    elif status == 408:
        message = f"{host} timed out handling the request (HTTP 408)"
        retryable = True
    elif status == 413:
        message = (
            f"{host} refused the request as too large (HTTP 413); the conversation may be too long"
        )
        retryable = False
    elif status == 429:
        message = f"{host} is rate limiting requests (HTTP 429)"
        retryable = True
    elif status >= 500:
        message = f"{host} had a server error (HTTP {status})"
        retryable = status not in (501, 505)
    else:
        message = f"{host} refused the request (HTTP {status})"
        retryable = False
    if detail:
        message = f"{message}: {detail}"
    return _fail(config, message, status=status, retryable=retryable)


def _cause(exc: BaseException) -> str:
    """The most telling words for a transport failure: the root OS error when
    there is one ("connection refused"), else the exception's own text."""
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            break
        if isinstance(seen, ConnectionRefusedError):
            return "connection refused"
        if isinstance(seen, socket.gaierror):
            return f"name not found: {seen.strerror or seen}"
        seen = seen.__cause__ or seen.__context__
    return str(exc) or type(exc).__name__


def error_for_exception(
    config: ProviderConfig, exc: Exception, *, answered: bool, streaming: bool
) -> ProviderError:
    """A ProviderError for an httpx failure. `answered`: response headers had
    arrived; `streaming`: some of the reply's content had arrived."""
    host = config.host
    why = redact(_cause(exc), secrets_of(config)).strip()
    suffix = f" ({why})" if why else ""
    if isinstance(exc, httpx.InvalidURL | httpx.UnsupportedProtocol):
        return _fail(config, f"the base URL is not valid{suffix}")
    if isinstance(exc, httpx.TimeoutException):
        if isinstance(exc, httpx.ConnectTimeout):
            message = f"could not reach {host} within {_seconds(config.timeout)}"
        elif streaming:
            message = f"the reply stalled: {host} sent nothing for {_seconds(config.timeout)}"
        else:
            message = f"{host} did not answer within {_seconds(config.timeout)}"
        return _fail(config, message, retryable=True)
    if answered:
        return _fail(config, f"the connection dropped mid-reply ({host}: {why})", retryable=True)
    if isinstance(exc, httpx.ConnectError):
        return _fail(config, f"could not reach {host}{suffix}", retryable=True)
    if isinstance(exc, httpx.RemoteProtocolError):
        return _fail(
            config, f"{host} closed the connection without answering{suffix}", retryable=True
        )
    return _fail(config, f"the request to {host} failed{suffix}", retryable=True)


# --- HTTP --------------------------------------------------------------------------------


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
    failure: ProviderError | None = None
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
                failure = error_for_status(config, response.status_code, body_bytes)
            elif content_type.startswith("application/json"):
                # A proxy or server that ignored `stream: true`, or an error dressed as a 200.
                detail = _detail(await _read_capped(response), config)
                failure = _fail(
                    config,
                    f"{config.host} answered without streaming" + (f": {detail}" if detail else ""),
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
        failure = error_for_exception(config, exc, answered=answered, streaming=parser.answered)
    if failure is not None:
        raise logged(config, failure)


async def get_json(
    config: ProviderConfig,
    url: str,
    *,
    headers: dict[str, str],
    client: httpx.AsyncClient | None = None,
    purpose: str = "models",
) -> Any:
    """GET `url` and parse its JSON, with the same errors as `post_sse`."""
    failure: ProviderError | None = None
    result: Any = None
    answered = False
    try:
        async with _client_for(config, client) as http:
            response = await http.get(url, headers=headers)
            answered = True
            if not 200 <= response.status_code < 300:
                failure = error_for_status(
                    config,
                    response.status_code,
                    response.content[:ERROR_BODY_LIMIT],
                    purpose=purpose,
                )
            else:
                try:
                    result = response.json()
                except ValueError:
                    failure = _fail(config, f"{config.host} did not answer with JSON at {url}")
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        failure = error_for_exception(config, exc, answered=answered, streaming=False)
    if failure is not None:
        raise logged(config, failure)
    return result


def cut_off(config: ProviderConfig) -> ProviderError:
    """The error for a stream that ended cleanly but before the reply did."""
    message = f"the connection dropped mid-reply ({config.host}): the stream ended before the reply"
    return logged(config, _fail(config, message, retryable=True))


def parse_json_event(config: ProviderConfig, data: str) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        raise _fail(
            config,
            f"{config.host} sent a reply that is not valid JSON: {data[:80]!r}",
            retryable=True,
        ) from None


def merge_extra(body: dict[str, Any], config: ProviderConfig) -> dict[str, Any]:
    if config.extra:
        body.update(config.extra)
    return body


# --- dispatch ---------------------------------------------------------------------------

KINDS = ("openai", "anthropic")


def _adapter(config: ProviderConfig) -> Any:
    # Imported here: the adapters import this module.
    from apps.chats.providers import anthropic, openai

    if config.kind == "openai":
        return openai
    if config.kind == "anthropic":
        return anthropic
    raise ProviderError(
        f'unknown provider kind "{config.kind}" (expected one of {", ".join(KINDS)})'
    )


def stream_chat(
    config: ProviderConfig,
    *,
    system: str,
    turns: list[Turn],
    tools: list[ToolSpec],
    client: httpx.AsyncClient | None = None,
) -> AsyncIterator[Event]:
    """The reply to `turns` as a stream of events, ending with Usage (when the
    server reports it) and Finished; ProviderError when it fails. The request
    is made when iteration starts; cancelling the iterating task closes it.
    `client`: a shared httpx.AsyncClient (its own timeouts then apply to the
    network; `config.timeout` still bounds the wait for the first token). By
    default each call makes its own client."""
    adapter = _adapter(config)
    return adapter.stream_chat(config, system=system, turns=turns, tools=tools, client=client)


async def list_models(
    config: ProviderConfig, *, client: httpx.AsyncClient | None = None
) -> list[str]:
    """The model ids the server offers, in its order (see each adapter for the endpoints)."""
    return await _adapter(config).list_models(config, client=client)
