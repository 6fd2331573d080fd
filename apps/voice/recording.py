"""What a dictation upload must pass before anything is sent upstream: its
size, its length (read from a WAV header; for other formats the length the
browser measured), each refused with a 413 or 400 and the words why."""

from __future__ import annotations

import io
import math
import wave
from dataclasses import dataclass

from apps.core.errors import JarvisError
from apps.voice import limits


class RecordingRefused(JarvisError):
    """The recording is not sent anywhere; `status` is the HTTP answer."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Recording:
    data: bytes
    filename: str
    content_type: str
    seconds: float | None  # None: a format whose length is not read here


def _duration(seconds: float) -> str:
    whole = round(seconds)
    minutes, rest = divmod(whole, 60)
    if minutes and rest:
        return f"{minutes} min {rest} s"
    return f"{minutes} min" if minutes else f"{whole} s"


def _megabytes(count: int) -> str:
    return f"{count / 1_000_000:.1f} MB"


def too_long(seconds: float) -> RecordingRefused:
    limit = limits.max_seconds()
    return RecordingRefused(
        f"The recording is {_duration(seconds)} long; dictation takes at most "
        f"{_duration(limit)}. Nothing was sent.",
        413,
    )


def body_too_big(length: int) -> RecordingRefused | None:
    """Checked on the request's Content-Length, before its body is read."""
    if length > limits.max_bytes() + limits.ENVELOPE_BYTES:
        return too_big(length)
    return None


def too_big(size: int) -> RecordingRefused:
    return RecordingRefused(
        f"The recording is {_megabytes(size)}; dictation takes at most "
        f"{_megabytes(limits.max_bytes())} (about {_duration(limits.max_seconds())}). "
        "Nothing was sent.",
        413,
    )


def wav_seconds(data: bytes) -> float | None:
    """The length of a WAV file from its header; None when it is not WAV.
    RecordingRefused when it says it is WAV and cannot be read."""
    if not (data[:4] == b"RIFF" and data[8:12] == b"WAVE"):
        return None
    try:
        with wave.open(io.BytesIO(data)) as audio:
            rate = audio.getframerate()
            frames = audio.getnframes()
    except (wave.Error, EOFError) as error:
        raise RecordingRefused(f"The recording is not a readable WAV file ({error}).") from None
    if rate <= 0:
        raise RecordingRefused("The recording's WAV header gives no sample rate.")
    return frames / rate


def recording_checked(
    *, data: bytes, filename: str, content_type: str, declared_seconds: str | None
) -> Recording:
    """The upload as a Recording, or RecordingRefused: empty, over the byte
    limit, or longer than the time limit by its WAV header or (another
    format) by the length the browser measured."""
    if not data:
        raise RecordingRefused("The recording is empty: nothing was heard.")
    if len(data) > limits.max_bytes():
        raise too_big(len(data))
    seconds = wav_seconds(data)
    if seconds is None and declared_seconds:
        try:
            seconds = float(declared_seconds)
        except ValueError:
            seconds = math.nan
        if not math.isfinite(seconds) or seconds < 0:
            raise RecordingRefused("The recording's length is not a number of seconds.")
    # A little slack: the browser stops at the limit, and a stop takes a moment.
    if seconds is not None and seconds > limits.max_seconds() + 1:
        raise too_long(seconds)
    name = filename.rsplit("/", 1)[-1][:100] or "dictation"
    return Recording(data, name, content_type or "application/octet-stream", seconds)
