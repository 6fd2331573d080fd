"""A fake OpenAI-compatible audio server over real HTTP, the two routes
Jarvis's voice uses (a whisper.cpp or faster-whisper server, a TTS server):

- POST /v1/audio/transcriptions (multipart: file, model, response_format):
  a readable WAV gets {"text": <self.text>}; anything else a 400 with
  {"error": {"message": "Unsupported format"}}, as a server without a
  converter answers a WebM or MP3.
- POST /v1/audio/speech (JSON: model, input, voice): a short WAV tone.

Every request is recorded (path, fields, the file's name, type, size and,
for a WAV, its length in seconds), so a test can say what reached the
server, or that nothing did. `wav_bytes` makes test recordings.
"""

from __future__ import annotations

import io
import json
import math
import struct
import wave
from email.parser import BytesParser
from email.policy import HTTP

from tests.fakes.serving import QuietHandler, ServedFake


def wav_bytes(seconds: float, *, rate: int = 16_000, tone: float = 440.0, width: int = 2) -> bytes:
    """A mono WAV of a sine tone: `seconds` long at `rate` Hz, `width` bytes a sample."""
    frames = int(seconds * rate)
    peak = 2 ** (8 * width - 1) - 1
    if width == 1:  # 8-bit WAV is unsigned
        samples = bytes(
            int(128 + 127 * math.sin(2 * math.pi * tone * i / rate)) for i in range(frames)
        )
    else:
        samples = b"".join(
            struct.pack("<h", int(peak * 0.3 * math.sin(2 * math.pi * tone * i / rate)))
            for i in range(frames)
        )
    out = io.BytesIO()
    with wave.open(out, "wb") as audio:
        audio.setnchannels(1)
        audio.setsampwidth(width)
        audio.setframerate(rate)
        audio.writeframes(samples)
    return out.getvalue()


def silent_wav(seconds: float, *, rate: int = 8_000) -> bytes:
    """A long WAV cheaply (silence), for recordings over the limit."""
    out = io.BytesIO()
    with wave.open(out, "wb") as audio:
        audio.setnchannels(1)
        audio.setsampwidth(1)
        audio.setframerate(rate)
        audio.writeframes(b"\x80" * int(seconds * rate))
    return out.getvalue()


def _wav_seconds(data: bytes) -> float | None:
    try:
        with wave.open(io.BytesIO(data)) as audio:
            return audio.getnframes() / audio.getframerate()
    except (wave.Error, EOFError, ZeroDivisionError):
        return None


def _multipart(content_type: str, body: bytes) -> dict[str, dict]:
    """The parts of a multipart/form-data body: name -> {value, filename, type}."""
    message = BytesParser(policy=HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + body
    )
    parts = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        parts[name] = {
            "value": part.get_payload(decode=True),
            "filename": part.get_filename(),
            "type": part.get_content_type(),
        }
    return parts


class _Handler(QuietHandler):
    owner: FakeAudio

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        record = {"path": self.path, "headers": dict(self.headers), "size": len(body)}
        self.owner.requests.append(record)
        if self.owner.fail_with:
            status, message = self.owner.fail_with
            self._json(status, {"error": {"message": message}})
            return
        if self.path == "/v1/audio/transcriptions":
            self._transcribe(record, body)
        elif self.path == "/v1/audio/speech":
            self._speak(record, body)
        else:
            self._json(404, {"error": {"message": f"No route {self.path}"}})

    def _json(self, status: int, data: object) -> None:
        self._send(status, json.dumps(data).encode(), "application/json")

    def _transcribe(self, record: dict, body: bytes) -> None:
        parts = _multipart(self.headers.get("Content-Type", ""), body)
        upload = parts.get("file") or {}
        data = upload.get("value") or b""
        record.update(
            model=(parts.get("model") or {}).get("value", b"").decode(),
            filename=upload.get("filename"),
            content_type=upload.get("type"),
            file_size=len(data),
            seconds=_wav_seconds(data),
        )
        if record["seconds"] is None:
            self._json(400, {"error": {"message": "Unsupported format"}})
            return
        self._json(200, {"text": self.owner.text})

    def _speak(self, record: dict, body: bytes) -> None:
        request = json.loads(body or b"{}")
        record["json"] = request
        if not request.get("input"):
            self._json(400, {"error": {"message": "input is required"}})
            return
        self._send(200, self.owner.speech, "audio/wav")


class FakeAudio(ServedFake):
    handler = _Handler

    def __init__(self, text: str = "Remind me to water the tomatoes on Sunday.") -> None:
        self.requests: list[dict] = []
        self.text = text
        self.speech = wav_bytes(0.4, rate=24_000, tone=330.0)
        self.fail_with: tuple[int, str] | None = None  # (status, message) for every request

    @property
    def api_base(self) -> str:
        """What an admin enters as the connection's base URL."""
        return f"{self.base_url}/v1"

    @property
    def transcriptions(self) -> list[dict]:
        return [r for r in self.requests if r["path"].endswith("/transcriptions")]

    @property
    def speeches(self) -> list[dict]:
        return [r for r in self.requests if r["path"].endswith("/speech")]
