"""Model-call failures a person can act on, with every secret redacted.

Errors are `ProviderError` with a message a person can act on ("could not
reach localhost:11434", "api.anthropic.com rejected the API key (HTTP 401)").
The API key never appears in one: every message is passed through `redact`,
and ProviderError is raised outside the `except` that caught the httpx error,
so no traceback carries the original (h11, for one, puts an illegal header
value, key included, into its message).
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import socket
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote, quote_plus

import httpx

from apps.core.errors import JarvisError
from apps.llm.config import ProviderConfig

logger = logging.getLogger("apps.llm")

REDACTED = "[redacted]"
DETAIL_LIMIT = 300


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


class LocalOnlyRefused(ProviderError):
    """Content that may not leave the house was about to go to a cloud model;
    nothing was sent."""


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


def _seconds(value: float) -> str:
    return f"{value:g} s"


def failure(config: ProviderConfig, message: str, **kwargs: Any) -> ProviderError:
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


def server_detail(body: bytes, config: ProviderConfig) -> str:
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
    detail = server_detail(body, config)
    if 300 <= status < 400:
        message = f"{host} answered with a redirect (HTTP {status}); check the base URL"
        retryable = False
    elif status in (401, 403):
        message = f"{host} rejected the API key (HTTP {status})"
        retryable = False
    elif status == 404:
        if purpose == "models":
            message = f"{host} has no model list at this base URL (HTTP 404)"
        elif purpose == "details":  # llama.cpp's /props, Ollama's /api/show (Check)
            message = f"{host} does not describe its models at this address (HTTP 404)"
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
    return failure(config, message, status=status, retryable=retryable)


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
        return failure(config, f"the base URL is not valid{suffix}")
    if isinstance(exc, httpx.TimeoutException):
        if isinstance(exc, httpx.ConnectTimeout):
            message = f"could not reach {host} within {_seconds(config.timeout)}"
        elif streaming:
            message = f"the reply stalled: {host} sent nothing for {_seconds(config.timeout)}"
        else:
            message = f"{host} did not answer within {_seconds(config.timeout)}"
        return failure(config, message, retryable=True)
    if answered:
        return failure(config, f"the connection dropped mid-reply ({host}: {why})", retryable=True)
    if isinstance(exc, httpx.ConnectError):
        return failure(config, f"could not reach {host}{suffix}", retryable=True)
    if isinstance(exc, httpx.RemoteProtocolError):
        return failure(
            config, f"{host} closed the connection without answering{suffix}", retryable=True
        )
    return failure(config, f"the request to {host} failed{suffix}", retryable=True)
