"""The calls to an OpenAI-compatible audio endpoint: a recording to text
(`POST {base}/audio/transcriptions`, multipart: file, model) and a reply's text
to audio (`POST {base}/audio/speech`, JSON: model, input, voice). Both go
through the model layer's HTTP client (no environment proxies, no redirects,
the connection's timeout) and fail with VoiceError: the upstream's own reason
in words, every secret redacted, and the HTTP status the browser gets."""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass

import httpx

from apps.core import crypto
from apps.core.errors import JarvisError
from apps.instance.models import Connection
from apps.llm.config import ProviderConfig
from apps.llm.errors import ProviderError, checked_key, error_for_exception, server_detail
from apps.llm.http import make_client
from apps.voice import limits
from apps.voice.recording import Recording

logger = logging.getLogger(__name__)

# What each route is called in a message a person reads.
SERVER_WORDS = {"transcription": "transcription server", "speech": "speech server"}
ROUTES = {"transcription": "/audio/transcriptions", "speech": "/audio/speech"}
DEFAULT_VOICE = "alloy"


@dataclass(frozen=True)
class _Answer:
    status_code: int
    headers: httpx.Headers
    content: bytes

    def json(self):
        return json.loads(self.content)


class VoiceError(JarvisError):
    """An audio request failed; the message is safe to show. `status` is what
    Jarvis answers the browser with."""

    def __init__(self, message: str, status: int = 502) -> None:
        super().__init__(message)
        self.status = status


def _config(connection: Connection, model: str) -> ProviderConfig:
    try:
        key = connection.api_key
    except crypto.SecretUndecryptable:
        raise VoiceError(
            f"The API key of the connection {connection.name} cannot be decrypted; "
            "an admin needs to enter it again.",
            503,
        ) from None
    return ProviderConfig(
        kind="openai",
        base_url=connection.base_url,
        api_key=key,
        model=model,
        timeout=float(limits.timeout_seconds()),
        cloud=connection.is_cloud,
    )


def _headers(config: ProviderConfig) -> dict[str, str]:
    try:
        key = checked_key(config)
    except ProviderError as error:
        raise VoiceError(f"The {config.host} connection's API key: {error.message}.", 503) from None
    return {"Authorization": f"Bearer {key}"} if key else {}


def _refusal(purpose: str, config: ProviderConfig, response: _Answer) -> VoiceError:
    """The upstream's "no", in its own words where it gave any."""
    server = SERVER_WORDS[purpose]
    detail = server_detail(response.content[: 64 * 1024], config)
    status = response.status_code
    if status in (401, 403):
        return VoiceError(f"The {server} at {config.host} rejected the API key (HTTP {status}).")
    if status == 404:
        return VoiceError(
            f"The {server} at {config.host} has no {ROUTES[purpose]} "
            f"route at this base URL, or does not know the model {config.model!r} (HTTP 404)."
        )
    if 400 <= status < 500:
        what = "the audio" if purpose == "transcription" else "the text"
        # The request's content was refused (format, length): the person's to change.
        return VoiceError(f"The {server} refused {what}: {detail or f'HTTP {status}'}", 400)
    tail = f": {detail}" if detail else ""
    return VoiceError(f"The {server} at {config.host} failed (HTTP {status}){tail}")


def _transport(purpose: str, config: ProviderConfig, error: Exception) -> VoiceError:
    problem = error_for_exception(config, error, answered=False, streaming=False)
    status = 504 if isinstance(error, httpx.TimeoutException) else 502
    return VoiceError(f"The {SERVER_WORDS[purpose]} failed: {problem.message}.", status)


async def _post(purpose: str, config: ProviderConfig, path: str, **request) -> _Answer:
    """POST and read the answer, at most MAX_SPEECH_AUDIO_BYTES of it (an
    endpoint is trusted with audio, not with filling the web process's memory)."""
    failed: Exception | None = None
    answer = None
    async with make_client(config) as client:
        try:
            async with client.stream(
                "POST", f"{config.base_url}{path}", headers=_headers(config), **request
            ) as response:
                body = b""
                async for chunk in response.aiter_bytes():
                    body += chunk
                    if len(body) > limits.MAX_SPEECH_AUDIO_BYTES:
                        break
                answer = _Answer(response.status_code, response.headers, body)
        except httpx.HTTPError as error:
            failed = error
    if failed is not None or answer is None:
        # Raised outside the except: no traceback carries httpx's message (a key in it).
        error = _transport(purpose, config, failed or RuntimeError("no answer"))
        logger.info("%s request to %s failed: %s", purpose, config.host, error)
        raise error
    if answer.status_code != 200:
        error = _refusal(purpose, config, answer)
        logger.info("%s request to %s refused: %s", purpose, config.host, error)
        raise error
    return answer


async def recording_transcribe(*, connection: Connection, recording: Recording) -> str:
    """The text of `recording`, as the connection's transcription model heard it."""
    config = _config(connection, connection.transcription_model)
    response = await _post(
        "transcription",
        config,
        ROUTES["transcription"],
        files={"file": (recording.filename, recording.data, recording.content_type)},
        data={"model": config.model, "response_format": "json"},
    )
    try:
        text = response.json().get("text")
    except (ValueError, AttributeError):
        # Not JSON, or JSON that is not an object: said below as "without any text".
        text = None
    if not isinstance(text, str):
        raise VoiceError(f"The transcription server at {config.host} answered without any text.")
    return " ".join(text.split())


async def text_speak(*, connection: Connection, text: str) -> tuple[bytes, str]:
    """`text` read aloud by the connection's speech model: (audio, content type)."""
    config = _config(connection, connection.speech_model)
    response = await _post(
        "speech",
        config,
        ROUTES["speech"],
        json={
            "model": config.model,
            "input": text,
            "voice": connection.speech_voice or DEFAULT_VOICE,
            "response_format": "mp3",
        },
    )
    content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
    if not content_type.startswith("audio/") and content_type != "application/octet-stream":
        raise VoiceError(
            f"The speech server at {config.host} answered with {content_type or 'no type'}, "
            "not audio."
        )
    if not response.content or len(response.content) > limits.MAX_SPEECH_AUDIO_BYTES:
        raise VoiceError(f"The speech server at {config.host} sent no usable audio.")
    return response.content, content_type


# Markdown a voice should not read out: code, links' addresses, emphasis marks,
# headings' hashes, list bullets, citation numbers ([3]).
_FENCE = re.compile(r"^[ \t]*(```|~~~).*?(^[ \t]*\1[^\n]*$|\Z)", re.S | re.M)
_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_CITATION = re.compile(r"\s?\[\d{1,3}\]")
_MARKS = re.compile(r"(\*\*|__|\*|`|~~)")
_LINE_MARKS = re.compile(r"^[ \t]*(#{1,6}[ \t]+|>[ \t]?|[-*+][ \t]+|\|)", re.M)


def speech_text(markdown: str, limit: int) -> tuple[str, bool]:
    """What a voice reads of a reply: its words without Markdown's marks,
    code blocks said as "(code)", at most `limit` characters cut at a
    sentence end where one is near. Returns (text, cut)."""
    text = _FENCE.sub(" (code) ", markdown)
    text = _IMAGE.sub(r"\1", text)
    text = _LINK.sub(r"\1", text)
    text = _CITATION.sub("", text)
    text = _LINE_MARKS.sub("", text)
    text = _MARKS.sub("", text).replace("|", " ")
    text = " ".join(text.split())
    if len(text) <= limit:
        return text, False
    cut = text[:limit]
    end = max(cut.rfind(". "), cut.rfind("! "), cut.rfind("? "))
    if end > limit // 2:
        cut = cut[: end + 1]
    return cut, True
