"""Fake LLM servers over real HTTP: an OpenAI-compatible one (with Ollama's
/api/tags) and an Anthropic Messages one, for every test that needs a model.

    with FakeOpenAI(models=["qwen3:8b"]) as llm:
        llm.queue(Reply(text="Hello!", usage=(12, 3)))
        llm.queue(Reply(tool_calls=[("search_kb", '{"query": "boiler"}')]))
        llm.queue(lambda request: Reply(text=f"{len(request['messages'])} messages"))
        config = ProviderConfig(kind="openai", base_url=llm.base_url, api_key=None, model="m")
        ...
        llm.requests[-1].json["messages"]

Each chat request takes the next scripted reply from the queue (a `Reply`, or a
callable given the request's JSON that returns one), or `default` when the queue
is empty (a reply of "ok"). `requests` records every request the server saw
(method, path, lower-cased headers, raw and parsed body; `chat_requests` the
POSTs only, `reset()` forgets them and the queue), and for streamed
replies whether the client went away before the end (`closed_early`,
`closed_at`) and when the handler was done (`done`, an Event).

Replies stream as the real APIs do: server-sent events over chunked HTTP/1.1
(keep-alive), text cut every `chunk_chars` characters, tool-call arguments cut
into several pieces (OpenAI: `delta.tool_calls` by index, id and name in the
first piece only; Anthropic: input_json_delta), reasoning as
`reasoning_content` (or `<think>` tags in the content with `think_tags=True`)
or as Anthropic thinking blocks with a signature. A streamed reply has one
opening chunk sent at once (OpenAI: the role; Anthropic: message_start and a
ping) and then its pieces: `first_token_delay` before the first piece, `delay`
between pieces (on an absolute schedule, so sleeps do not drift),
`tokens_per_second` as a shorthand for a token of 4 characters every 1/N s.
`drop_after_chunks` cuts the connection (no final chunk) after that many pieces.
Misbehaving servers (OpenAI): `body` answers a 200 with that text instead of a
stream, `hang_after_headers` sends the headers and then nothing, and
`replay` plays a stream from tests/fakes/streams/ (an empty one included).

The server is a ThreadingHTTPServer with daemon threads and a deep listen
backlog, so a hundred concurrent streams are fine. While it waits between
pieces it watches the socket, so a client that disconnects is noticed within
milliseconds (`closed_at`), which is what the cancellation tests measure.
A fake with `api_key` set answers 401 to any other key, quoting the key it got
in the error (as some servers do), so redaction is tested against the worst case.

Images in a chat request are read as a vision model's server reads them
(OpenAI: `image_url` parts holding `data:` URLs; Anthropic: `image` blocks with
a base64 `source`) and kept, decoded, in `SeenRequest.images` as
(media type, bytes); a malformed one is answered with HTTP 400, as the real
APIs do. A scripted reply can look at them: `llm.queue(lambda body: Reply(
text=describe(images_in(body))))`.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import math
import select
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.fakes.serving import ServedFake


@dataclass
class Reply:
    text: str = ""
    reasoning: str = ""
    tool_calls: list[tuple[str, str]] = field(default_factory=list)  # (name, arguments JSON)
    chunk_chars: int = 8
    delay: float = 0.0  # seconds between pieces
    first_token_delay: float = 0.0  # seconds before the first piece (after the opening chunk)
    usage: tuple[int, int] | None = None  # (input tokens, output tokens)
    cost: float | None = None  # OpenRouter's usage.cost
    think_tags: bool = False  # OpenAI: reasoning inside <think>…</think> in the content
    drop_after_chunks: int | None = None  # cut the connection after this many pieces
    status: int = 200  # anything else: an error response instead of a stream
    error_body: str | dict | None = None  # that response's body (default: the API's error shape)
    tokens_per_second: float | None = None  # overrides chunk_chars=4 and delay=1/N
    # Less common knobs:
    reasoning_field: str = "reasoning_content"  # OpenAI: or "reasoning" (OpenRouter, Ollama)
    finish_reason: str | None = None  # override: "length", "max_tokens", ...
    interleave_tool_calls: bool = False  # OpenAI: pieces of parallel calls alternate
    keepalive: float | None = None  # a keep-alive (comment, Anthropic ping) every N s while waiting
    multiline_data: bool = False  # OpenAI: each event's JSON spread over several data: lines
    stream_error: str | None = None  # an in-stream error event after drop_after_chunks (or the end)
    signature: str = "EqQBCkYIBxgCKkD0fake0signature"  # Anthropic thinking signature
    redacted_thinking: str | None = None  # Anthropic: a redacted_thinking block with this data
    # OpenAI: replay a stream recorded from a real server (tests/fakes/streams/NAME.sse),
    # event by event as it was sent; the other knobs except `delay` do not apply.
    replay: str | None = None
    # OpenAI, misbehaving servers: a 200 whose body is this text, not a stream (a
    # proxy's HTML page); or the stream's headers and then nothing until the client
    # gives up (a server stuck after accepting the request).
    body: str | None = None
    hang_after_headers: bool = False
    # A test's gate: the last counted piece waits until this Event is set, so a
    # test can look at a reply mid-stream however fast or slow the machine is.
    hold_last_until: threading.Event | None = None

    @property
    def piece_chars(self) -> int:
        return 4 if self.tokens_per_second else max(1, self.chunk_chars)

    @property
    def piece_delay(self) -> float:
        return 1.0 / self.tokens_per_second if self.tokens_per_second else self.delay


ReplyLike = Reply | Callable[[Any], Reply]


@dataclass
class SeenRequest:
    method: str
    path: str
    headers: dict[str, str]  # lower-case names
    raw: bytes
    json: Any  # the parsed body, None when there was none or it was not JSON
    closed_early: bool = False  # the client went away before the reply ended
    closed_at: float | None = None  # time.monotonic() when that was noticed
    pieces_sent: int = 0
    done: threading.Event = field(default_factory=threading.Event)
    images: list[tuple[str, bytes]] = field(default_factory=list)  # (media type, bytes)
    image_error: str = ""  # why an image in the request could not be read

    @property
    def route(self) -> str:
        return urlsplit(self.path).path


_IMAGE_TYPES = ("image/png", "image/jpeg", "image/webp", "image/gif")


def _image(media_type: Any, data: Any) -> tuple[str, bytes]:
    if media_type not in _IMAGE_TYPES:
        raise ValueError(f"unsupported image media type {media_type!r}")
    try:
        return media_type, base64.b64decode(data, validate=True)
    except (binascii.Error, TypeError, ValueError):
        raise ValueError("image data is not valid base64") from None


def images_in(body: Any) -> list[tuple[str, bytes]]:
    """The images of a chat request in either wire format, decoded; ValueError
    for one a real server would refuse."""
    found: list[tuple[str, bytes]] = []
    messages = body.get("messages") if isinstance(body, dict) else None
    for message in messages or []:
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            continue
        for part in content:
            if not isinstance(part, dict):
                continue
            if part.get("type") == "image_url":  # OpenAI
                url = (part.get("image_url") or {}).get("url", "")
                head, comma, data = url.partition(",")
                if not (head.startswith("data:") and head.endswith(";base64") and comma):
                    raise ValueError("image_url must be a base64 data: URL")
                found.append(_image(head[5:].removesuffix(";base64"), data))
            elif part.get("type") == "image":  # Anthropic
                source = part.get("source") or {}
                if source.get("type") != "base64":
                    raise ValueError("image source must be base64")
                found.append(_image(source.get("media_type"), source.get("data")))
    return found


class _Requests(list):
    """A filtered copy of `requests` whose clear() also removes its items from the
    server's record, so `llm.chat_requests.clear()` does what it says."""

    def __init__(self, fake: _FakeLLM, items: list[SeenRequest]) -> None:
        super().__init__(items)
        self._fake = fake

    def clear(self) -> None:
        gone = {id(r) for r in self}
        self._fake.requests[:] = [r for r in self._fake.requests if id(r) not in gone]
        super().clear()


class _ClientGone(Exception):
    pass


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def _argument_pieces(arguments: str, size: int) -> list[str]:
    # Always more than one piece, so every test exercises reassembly.
    size = max(1, min(size, math.ceil(len(arguments) / 2)))
    return _pieces(arguments, size) or [""]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server
    timeout = 60  # an idle keep-alive connection's thread ends eventually

    def log_message(self, format, *args) -> None:
        pass

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def _handle(self, method: str) -> None:
        fake = self.server.fake
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = None
        seen = SeenRequest(
            method=method,
            path=self.path,
            headers={k.lower(): v for k, v in self.headers.items()},
            raw=raw,
            json=parsed,
        )
        if method == "POST":
            try:
                seen.images = images_in(parsed)
            except ValueError as exc:
                seen.image_error = str(exc)
        fake.requests.append(seen)
        try:
            fake.handle(self, seen)
        except (_ClientGone, OSError):
            seen.closed_early = True
            seen.closed_at = time.monotonic()
            self.close_connection = True
        finally:
            seen.done.set()

    # --- responses

    def send_json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        self.send_response(status)
        content_type = "text/plain" if isinstance(body, str) else "application/json"
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def start_stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def write_chunk(self, data: bytes) -> None:
        if data:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def end_stream(self) -> None:
        self.wfile.write(b"0\r\n\r\n")

    def drop(self) -> None:
        """Cut the connection mid-body: no terminating chunk, as a crash would."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    def pause_until(self, moment: float) -> None:
        """Sleep until `moment`, noticing a client that disconnects meanwhile."""
        fake = self.server.fake
        while True:
            left = moment - time.monotonic()
            if left <= 0:
                return
            if fake.stopping.is_set():
                raise _ClientGone
            readable, _, _ = select.select([self.connection], [], [], min(left, 0.05))
            if readable:
                try:
                    peeked = self.connection.recv(1, socket.MSG_PEEK)
                except OSError:
                    raise _ClientGone from None
                if not peeked:
                    raise _ClientGone
                time.sleep(min(left, 0.05))  # the client sent more (unexpected): just wait

    def wait_for(self, event: threading.Event) -> None:
        """Wait until `event` is set, noticing a client that disconnects meanwhile."""
        while not event.is_set():
            self.pause_until(time.monotonic() + 0.05)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 1024  # the default of 5 makes a burst of connects wait for SYN retries

    def __init__(self, fake: _FakeLLM) -> None:
        self.fake = fake
        super().__init__(("127.0.0.1", 0), _Handler)

    def handle_error(self, request, client_address) -> None:
        pass  # a client that hung up mid-reply is what several tests do on purpose


class _FakeLLM(ServedFake):
    kind = ""

    def __init__(
        self,
        *,
        models: list[str] | None = None,
        api_key: str | None = None,
        default: ReplyLike | None = None,
    ) -> None:
        self.models: list[str] = list(models) if models is not None else ["fake-model"]
        self.api_key = api_key
        self.default: ReplyLike = default if default is not None else Reply(text="ok")
        self.requests: list[SeenRequest] = []
        self.stopping = threading.Event()
        self._queue: deque[ReplyLike] = deque()
        self._count = 0
        self._lock = threading.Lock()

    # --- scripting

    def queue(self, *replies: ReplyLike) -> None:
        """Replies for the next chat requests, in order."""
        self._queue.extend(replies)

    def next_reply(self, request_json: Any) -> Reply:
        try:
            item = self._queue.popleft()
        except IndexError:
            item = self.default
        return item(request_json) if callable(item) else item

    @property
    def chat_requests(self) -> list[SeenRequest]:
        """The chat (POST) requests so far; `.clear()` on it forgets them on the server too."""
        # Ollama's /api/show is a POST too, but it asks about a model, not for a reply.
        chats = [r for r in self.requests if r.method == "POST" and r.route != "/api/show"]
        return _Requests(self, chats)

    def reset(self) -> None:
        """Forget every request seen and every reply still queued."""
        self.requests.clear()
        self._queue.clear()

    def _serial(self) -> int:
        with self._lock:
            self._count += 1
            return self._count

    # --- lifecycle

    @property
    def port(self) -> int:
        assert self._server is not None, "start the server first"
        return self._server.server_address[1]

    @property
    def root_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def make_server(self) -> _Server:
        return _Server(self)

    def start(self):
        self.stopping.clear()
        return super().start()

    def stop(self) -> None:
        self.stopping.set()  # a reply still streaming ends at once
        super().stop()

    # --- serving

    def handle(self, handler: _Handler, seen: SeenRequest) -> None:
        raise NotImplementedError

    def stream(
        self,
        handler: _Handler,
        seen: SeenRequest,
        reply: Reply,
        opening: list[bytes],
        pieces: Iterator[tuple[bool, bytes]],
        error_event: bytes,
        keepalive: bytes,
    ) -> None:
        """Send a stream: the opening at once, then the pieces on their schedule.
        `pieces` yields (counts, data); only counted pieces are paced and dropped after."""
        handler.start_stream()
        for data in opening:
            handler.write_chunk(data)
        start = time.monotonic()
        if reply.first_token_delay:
            if reply.keepalive:
                moment = start + reply.keepalive
                while moment < start + reply.first_token_delay:
                    handler.pause_until(moment)
                    handler.write_chunk(keepalive)
                    moment += reply.keepalive
            handler.pause_until(start + reply.first_token_delay)
        first = time.monotonic()
        steps = list(pieces)
        counted = [i for i, (counts, _) in enumerate(steps) if counts]
        cut = reply.drop_after_chunks
        if cut is None and reply.stream_error:
            cut = len(counted)  # the error comes after the last piece
        last = counted[-1] if counted else -1
        sent = 0
        for position, (counts, data) in enumerate(steps):
            if cut is not None and sent >= cut and (counts or position > last):
                if reply.stream_error:
                    handler.write_chunk(error_event)
                    handler.end_stream()
                else:
                    handler.drop()
                return
            if counts:
                if sent and reply.piece_delay:
                    handler.pause_until(first + sent * reply.piece_delay)
                if position == last and reply.hold_last_until is not None:
                    handler.wait_for(reply.hold_last_until)
                sent += 1
                seen.pieces_sent = sent
            handler.write_chunk(data)
        handler.end_stream()

    def check_key(self, given: str | None) -> bool:
        return self.api_key is None or given == self.api_key


# --- OpenAI-compatible ---------------------------------------------------------------------


STREAMS = Path(__file__).resolve().parent / "streams"


def recorded_events(name: str) -> list[bytes]:
    """A recorded stream's server-sent events (each ends with its blank line)."""
    raw = (STREAMS / f"{name}.sse").read_bytes()
    return [part + b"\n\n" for part in raw.split(b"\n\n") if part.strip()]


def _sse(payload: Any, *, multiline: bool = False) -> bytes:
    if multiline:
        lines = json.dumps(payload, indent=1).split("\n")
        return ("".join(f"data: {line}\n" for line in lines) + "\n").encode()
    return f"data: {json.dumps(payload)}\n\n".encode()


CHAT_ROUTES = ("/v1/chat/completions", "/chat/completions")  # llama.cpp answers both


def _entry(model: str | dict) -> dict:
    return {"id": model} if isinstance(model, str) else dict(model)


class FakeOpenAI(_FakeLLM):
    """POST /v1/chat/completions (or /chat/completions), GET /v1/models (and /models),
    GET /api/tags (Ollama). Set `models_endpoint = False` to answer /models with a
    404 as an Ollama without /v1 does. `props` (a dict) is served at GET /props as
    llama.cpp does, `shown` (model id -> dict) at POST /api/show as Ollama does;
    unset, both answer 404 as other servers do."""

    kind = "openai"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.models_endpoint = True
        self.props: dict | None = None
        self.shown: dict[str, dict] = {}

    @property
    def base_url(self) -> str:
        return f"{self.root_url}/v1"

    def handle(self, handler: _Handler, seen: SeenRequest) -> None:
        route = seen.route
        given = seen.headers.get("authorization")
        if route in (*CHAT_ROUTES, "/v1/models", "/models") and not self.check_key(
            (given or "").removeprefix("Bearer ") or None
        ):
            handler.send_json(
                401, self._error(f"Incorrect API key provided: {given}", "invalid_api_key")
            )
            return
        if seen.method == "GET" and route in ("/v1/models", "/models"):
            if not self.models_endpoint:
                handler.send_json(404, "404 page not found")
                return
            # A model is an id, or a dict of the fields a richer server lists
            # (OpenRouter: context_length, supported_parameters, architecture).
            data = [
                {"object": "model", "created": 0, "owned_by": "fake", **_entry(m)}
                for m in self.models
            ]
            handler.send_json(200, {"object": "list", "data": data})
        elif seen.method == "GET" and route == "/api/tags":
            names = [_entry(m)["id"] for m in self.models]
            models = [{"name": m, "model": m, "size": 0, "digest": "0" * 12} for m in names]
            handler.send_json(200, {"models": models})
        elif seen.method == "GET" and route == "/props" and self.props is not None:
            handler.send_json(200, self.props)
        elif seen.method == "POST" and route == "/api/show":
            model = (seen.json or {}).get("model") if isinstance(seen.json, dict) else None
            if model in self.shown:
                handler.send_json(200, self.shown[model])
            else:
                handler.send_json(404, {"error": f"model '{model}' not found"})
        elif seen.method == "POST" and route in CHAT_ROUTES:
            self._chat(handler, seen)
        else:
            handler.send_json(404, self._error(f"no route {route}", "not_found"))

    @staticmethod
    def _error(message: str, code: str) -> dict:
        return {"error": {"message": message, "type": "invalid_request_error", "code": code}}

    def _chat(self, handler: _Handler, seen: SeenRequest) -> None:
        body = seen.json if isinstance(seen.json, dict) else {}
        if seen.image_error:
            handler.send_json(400, self._error(seen.image_error, "invalid_image"))
            return
        try:
            reply = self.next_reply(body)
        except Exception as exc:
            handler.send_json(500, self._error(f"the scripted reply failed: {exc!r}", "fake"))
            return
        if reply.status != 200:
            handler.send_json(
                reply.status,
                reply.error_body
                if reply.error_body is not None
                else self._error(
                    f"scripted HTTP {reply.status} (key {seen.headers.get('authorization')})",
                    str(reply.status),
                ),
                {"retry-after": "1"} if reply.status == 429 else None,
            )
            return
        if reply.body is not None:
            handler.send_response(200)
            handler.send_header("Content-Type", "text/html")
            handler.send_header("Content-Length", str(len(reply.body.encode())))
            handler.end_headers()
            handler.wfile.write(reply.body.encode())
            return
        if reply.hang_after_headers:
            handler.start_stream()
            handler.wfile.flush()
            handler.pause_until(time.monotonic() + 3600)  # ends when the client goes
            return
        if reply.replay:
            self._replay(handler, seen, reply)
            return
        serial = self._serial()
        model = body.get("model", "fake-model")
        calls = [
            (f"call_{serial}_{i}", name, args) for i, (name, args) in enumerate(reply.tool_calls)
        ]
        finish = reply.finish_reason or ("tool_calls" if calls else "stop")
        if not body.get("stream"):
            if reply.first_token_delay:
                handler.pause_until(time.monotonic() + reply.first_token_delay)
            handler.send_json(200, self._complete(reply, model, calls, finish, serial))
            return
        head = {
            "id": f"chatcmpl-{serial}",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": model,
        }
        multiline = reply.multiline_data

        def chunk(delta: dict, finish_reason: str | None = None) -> bytes:
            choice = {"index": 0, "delta": delta, "finish_reason": finish_reason}
            return _sse({**head, "choices": [choice]}, multiline=multiline)

        def pieces() -> Iterator[tuple[bool, bytes]]:
            size = reply.piece_chars
            if reply.think_tags:
                content = (
                    f"<think>{reply.reasoning}</think>\n\n" if reply.reasoning else ""
                ) + reply.text
                for piece in _pieces(content, size):
                    yield True, chunk({"content": piece})
            else:
                for piece in _pieces(reply.reasoning, size):
                    yield True, chunk({reply.reasoning_field: piece})
                for piece in _pieces(reply.text, size):
                    yield True, chunk({"content": piece})
            streams = []
            for index, (call_id, name, args) in enumerate(calls):
                first = {
                    "index": index,
                    "id": call_id,
                    "type": "function",
                    "function": {"name": name, "arguments": ""},
                }
                rest = [
                    {"index": index, "function": {"arguments": p}}
                    for p in _argument_pieces(args, size)
                ]
                streams.append([first, *rest])
            if reply.interleave_tool_calls:
                order = [
                    s[i]
                    for i in range(max(map(len, streams), default=0))
                    for s in streams
                    if i < len(s)
                ]
            else:
                order = [piece for s in streams for piece in s]
            for piece in order:
                yield True, chunk({"tool_calls": [piece]})
            yield False, chunk({}, finish)
            if reply.usage is not None and (body.get("stream_options") or {}).get("include_usage"):
                usage = {
                    "prompt_tokens": reply.usage[0],
                    "completion_tokens": reply.usage[1],
                    "total_tokens": sum(reply.usage),
                }
                if reply.cost is not None:
                    usage["cost"] = reply.cost
                yield False, _sse({**head, "choices": [], "usage": usage}, multiline=multiline)
            yield False, b"data: [DONE]\n\n"

        error = (
            _sse({"error": {"message": reply.stream_error, "code": 502}})
            if reply.stream_error
            else b""
        )
        self.stream(
            handler,
            seen,
            reply,
            [chunk({"role": "assistant", "content": ""})],
            pieces(),
            error,
            b": keep-alive\n\n",
        )

    def _replay(self, handler: _Handler, seen: SeenRequest, reply: Reply) -> None:
        events = recorded_events(reply.replay)
        self.stream(
            handler, seen, reply, [], iter([(True, e) for e in events]), b"", b": keep-alive\n\n"
        )

    def _complete(self, reply: Reply, model: str, calls: list, finish: str, serial: int) -> dict:
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        if reply.think_tags and reply.reasoning:
            message["content"] = f"<think>{reply.reasoning}</think>\n\n{reply.text}"
        elif reply.reasoning:
            message[reply.reasoning_field] = reply.reasoning
        if calls:
            message["tool_calls"] = [
                {"id": i, "type": "function", "function": {"name": n, "arguments": a}}
                for i, n, a in calls
            ]
        result: dict[str, Any] = {
            "id": f"chatcmpl-{serial}",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        }
        if reply.usage is not None:
            result["usage"] = {
                "prompt_tokens": reply.usage[0],
                "completion_tokens": reply.usage[1],
                "total_tokens": sum(reply.usage),
            }
            if reply.cost is not None:
                result["usage"]["cost"] = reply.cost
        return result


# --- Anthropic --------------------------------------------------------------------------------


def _event(payload: dict) -> bytes:
    return f"event: {payload['type']}\ndata: {json.dumps(payload)}\n\n".encode()


ANTHROPIC_STOP = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}


class FakeAnthropic(_FakeLLM):
    """POST /v1/messages, GET /v1/models (paged by `page_size`, `after_id`)."""

    kind = "anthropic"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.page_size = 1000

    @property
    def base_url(self) -> str:
        return self.root_url

    @staticmethod
    def _error(kind: str, message: str) -> dict:
        return {"type": "error", "error": {"type": kind, "message": message}}

    def handle(self, handler: _Handler, seen: SeenRequest) -> None:
        route = seen.route
        given = seen.headers.get("x-api-key")
        if route.startswith("/v1/") and not self.check_key(given):
            handler.send_json(
                401, self._error("authentication_error", f"invalid x-api-key: {given}")
            )
            return
        if seen.method == "GET" and route == "/v1/models":
            query = parse_qs(urlsplit(seen.path).query)
            limit = min(int(query.get("limit", ["20"])[0]), self.page_size)
            after = query.get("after_id", [None])[0]
            start = self.models.index(after) + 1 if after in self.models else 0
            page = self.models[start : start + limit]
            data = [
                {"type": "model", "id": m, "display_name": m, "created_at": "2025-01-01T00:00:00Z"}
                for m in page
            ]
            handler.send_json(
                200,
                {
                    "data": data,
                    "has_more": start + limit < len(self.models),
                    "first_id": page[0] if page else None,
                    "last_id": page[-1] if page else None,
                },
            )
        elif seen.method == "POST" and route == "/v1/messages":
            self._messages(handler, seen)
        else:
            handler.send_json(404, self._error("not_found_error", f"no route {route}"))

    def _messages(self, handler: _Handler, seen: SeenRequest) -> None:
        body = seen.json if isinstance(seen.json, dict) else {}
        if seen.image_error:
            handler.send_json(400, self._error("invalid_request_error", seen.image_error))
            return
        try:
            reply = self.next_reply(body)
        except Exception as exc:
            handler.send_json(500, self._error("api_error", f"the scripted reply failed: {exc!r}"))
            return
        if reply.status != 200:
            kinds = {
                400: "invalid_request_error",
                401: "authentication_error",
                403: "permission_error",
                404: "not_found_error",
                429: "rate_limit_error",
                529: "overloaded_error",
            }
            default = self._error(
                kinds.get(reply.status, "api_error"),
                f"scripted HTTP {reply.status} (key {seen.headers.get('x-api-key')})",
            )
            handler.send_json(
                reply.status,
                reply.error_body if reply.error_body is not None else default,
                {"retry-after": "1"} if reply.status == 429 else None,
            )
            return
        serial = self._serial()
        model = body.get("model", "fake-model")
        calls = [
            (f"toolu_{serial:04d}{i:02d}fake", name, args)
            for i, (name, args) in enumerate(reply.tool_calls)
        ]
        finish = reply.finish_reason or ("tool_calls" if calls else "stop")
        stop_reason = ANTHROPIC_STOP.get(finish, finish)
        usage_in, usage_out = reply.usage if reply.usage is not None else (None, None)
        if not body.get("stream"):
            if reply.first_token_delay:
                handler.pause_until(time.monotonic() + reply.first_token_delay)
            handler.send_json(200, self._complete(reply, model, calls, stop_reason, serial))
            return

        def pieces() -> Iterator[tuple[bool, bytes]]:
            size = reply.piece_chars
            index = 0
            if reply.reasoning:
                yield (
                    False,
                    _event(
                        {
                            "type": "content_block_start",
                            "index": index,
                            "content_block": {"type": "thinking", "thinking": "", "signature": ""},
                        }
                    ),
                )
                for piece in _pieces(reply.reasoning, size):
                    yield (
                        True,
                        _event(
                            {
                                "type": "content_block_delta",
                                "index": index,
                                "delta": {"type": "thinking_delta", "thinking": piece},
                            }
                        ),
                    )
                yield (
                    False,
                    _event(
                        {
                            "type": "content_block_delta",
                            "index": index,
                            "delta": {"type": "signature_delta", "signature": reply.signature},
                        }
                    ),
                )
                yield False, _event({"type": "content_block_stop", "index": index})
                index += 1
            if reply.redacted_thinking is not None:
                yield (
                    True,
                    _event(
                        {
                            "type": "content_block_start",
                            "index": index,
                            "content_block": {
                                "type": "redacted_thinking",
                                "data": reply.redacted_thinking,
                            },
                        }
                    ),
                )
                yield False, _event({"type": "content_block_stop", "index": index})
                index += 1
            if reply.text:
                yield (
                    False,
                    _event(
                        {
                            "type": "content_block_start",
                            "index": index,
                            "content_block": {"type": "text", "text": ""},
                        }
                    ),
                )
                for piece in _pieces(reply.text, size):
                    yield (
                        True,
                        _event(
                            {
                                "type": "content_block_delta",
                                "index": index,
                                "delta": {"type": "text_delta", "text": piece},
                            }
                        ),
                    )
                yield False, _event({"type": "content_block_stop", "index": index})
                index += 1
            for call_id, name, args in calls:
                yield (
                    True,
                    _event(
                        {
                            "type": "content_block_start",
                            "index": index,
                            "content_block": {
                                "type": "tool_use",
                                "id": call_id,
                                "name": name,
                                "input": {},
                            },
                        }
                    ),
                )
                for piece in ["", *_argument_pieces(args, size)]:
                    yield (
                        True,
                        _event(
                            {
                                "type": "content_block_delta",
                                "index": index,
                                "delta": {"type": "input_json_delta", "partial_json": piece},
                            }
                        ),
                    )
                yield False, _event({"type": "content_block_stop", "index": index})
                index += 1
            delta: dict[str, Any] = {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            }
            if usage_out is not None:
                delta["usage"] = {"output_tokens": usage_out}
            yield False, _event(delta)
            yield False, _event({"type": "message_stop"})

        message: dict[str, Any] = {
            "id": f"msg_{serial}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
        }
        if reply.usage is not None:
            message["usage"] = {"input_tokens": usage_in, "output_tokens": 1}
        opening = [_event({"type": "message_start", "message": message}), _event({"type": "ping"})]
        error = (
            _event(
                {
                    "type": "error",
                    "error": {"type": "overloaded_error", "message": reply.stream_error},
                }
            )
            if reply.stream_error
            else b""
        )
        self.stream(handler, seen, reply, opening, pieces(), error, _event({"type": "ping"}))

    def _complete(
        self, reply: Reply, model: str, calls: list, stop_reason: str, serial: int
    ) -> dict:
        content: list[dict[str, Any]] = []
        if reply.reasoning:
            content.append(
                {"type": "thinking", "thinking": reply.reasoning, "signature": reply.signature}
            )
        if reply.text:
            content.append({"type": "text", "text": reply.text})
        for call_id, name, args in calls:
            try:
                arguments = json.loads(args or "{}")
            except ValueError:
                arguments = {}
            content.append({"type": "tool_use", "id": call_id, "name": name, "input": arguments})
        result: dict[str, Any] = {
            "id": f"msg_{serial}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
        }
        if reply.usage is not None:
            result["usage"] = {"input_tokens": reply.usage[0], "output_tokens": reply.usage[1]}
        return result
