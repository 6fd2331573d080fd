"""Voice's limits, read from the environment at call time: how long a
dictation may be (JARVIS_VOICE_MAX_SECONDS), how many bytes it may take
(JARVIS_VOICE_MAX_BYTES), how much of a reply is read aloud
(JARVIS_VOICE_MAX_SPEECH_CHARS) and how long an audio server may take
(JARVIS_VOICE_TIMEOUT_SECONDS).

The site package (settings.py) is out of reach of the apps (import-linter), so
the variables are parsed here; a Django setting of the same name without the
JARVIS_ prefix (VOICE_MAX_SECONDS, ...) wins, which is how tests set them."""

from __future__ import annotations

import os

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

# 16 kHz, 16-bit, mono: what the browser sends (static/js/voice.js) and what
# whisper models are trained on. A byte limit follows from the time limit.
WAV_BYTES_PER_SECOND = 32_000
# The WAV header and the multipart wrapping around the file.
ENVELOPE_BYTES = 64 * 1024
# A reply's audio is a few MB; anything far bigger is not a reply read aloud.
MAX_SPEECH_AUDIO_BYTES = 40 * 1024 * 1024


def _number(name: str, default: int, minimum: int) -> int:
    configured = getattr(settings, name, None)
    if configured is not None:
        return int(configured)
    raw = os.environ.get(f"JARVIS_{name}", "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"JARVIS_{name}: expected a whole number, got {raw!r}") from None
    if value < minimum:
        raise ImproperlyConfigured(f"JARVIS_{name}: expected at least {minimum}, got {value}")
    return value


def max_seconds() -> int:
    """The longest dictation, in seconds (the browser stops recording there)."""
    return _number("VOICE_MAX_SECONDS", 120, 1)


def max_bytes() -> int:
    """The largest recording accepted: by default what max_seconds() of
    16 kHz mono WAV takes, plus its header."""
    return _number("VOICE_MAX_BYTES", max_seconds() * WAV_BYTES_PER_SECOND + 1024, 1024)


def max_speech_chars() -> int:
    """How much of a reply is read aloud (OpenAI's /audio/speech takes 4096)."""
    return _number("VOICE_MAX_SPEECH_CHARS", 4096, 100)


def timeout_seconds() -> int:
    return _number("VOICE_TIMEOUT_SECONDS", 120, 1)
