"""The wire format between a Jarvis process, its sandbox zygote and the
children the zygote forks. Plain frames and JSON only: the parent never
unpickles anything a child wrote, because a child that parsed a hostile file
may no longer be trustworthy.

Request (a temporary file the child reads): 8-byte length, JSON header
{"task", "params", "limits", "blob_sizes"}, then the blobs back to back.

Result (a socket the parent reads): frames of 1 type byte + 8-byte length +
payload. The child writes R (the task's JSON result) followed by one B per
blob, or E (a JSON error). The zygote writes X (how the child ended) once it
has reaped it, then closes its end; EOF follows.
"""

from __future__ import annotations

import json
import struct
from typing import BinaryIO

LENGTH = struct.Struct(">Q")
RESULT, BLOB, ERROR, EXIT = b"R", b"B", b"E", b"X"


def write_request(handle: BinaryIO, header: dict, blobs: list[bytes]) -> None:
    header = {**header, "blob_sizes": [len(b) for b in blobs]}
    raw = json.dumps(header).encode()
    handle.write(LENGTH.pack(len(raw)))
    handle.write(raw)
    for blob in blobs:
        handle.write(blob)
    handle.flush()


def read_request_header(handle: BinaryIO) -> dict:
    (size,) = LENGTH.unpack(_exactly(handle, LENGTH.size))
    return json.loads(_exactly(handle, size))


def read_blobs(handle: BinaryIO, sizes: list[int]) -> list[bytes]:
    return [_exactly(handle, size) for size in sizes]


def _exactly(handle: BinaryIO, size: int) -> bytes:
    data = handle.read(size)
    if len(data) != size:
        raise EOFError("the request was cut short")
    return data


def frame(kind: bytes, payload: bytes) -> bytes:
    return kind + LENGTH.pack(len(payload)) + payload


def json_frame(kind: bytes, value: dict) -> bytes:
    return frame(kind, json.dumps(value).encode())


class FrameReader:
    """Splits bytes arriving on a result socket into (type, payload) frames.

    Once `keep_only_exit` is set (the child sent more than the caller will
    hold), payloads of other frames are skipped as they stream past instead
    of being buffered."""

    HEADER = 1 + LENGTH.size

    def __init__(self) -> None:
        self.header = bytearray()
        self.kind = b""
        self.left = 0  # payload bytes still to come for the current frame
        self.payload = bytearray()
        self.keep_only_exit = False

    def feed(self, data: bytes) -> list[tuple[bytes, bytes]]:
        frames = []
        view = memoryview(data)
        while view:
            if not self.kind:
                need = self.HEADER - len(self.header)
                self.header.extend(view[:need])
                view = view[need:]
                if len(self.header) < self.HEADER:
                    break
                self.kind = bytes(self.header[:1])
                (self.left,) = LENGTH.unpack(self.header[1:])
                self.header.clear()
                self.payload = bytearray()
            take = view[: self.left]
            if self.kind == EXIT or not self.keep_only_exit:
                self.payload.extend(take)
            self.left -= len(take)
            view = view[len(take) :]
            if self.left == 0:
                if self.kind == EXIT or not self.keep_only_exit:
                    frames.append((self.kind, bytes(self.payload)))
                self.kind, self.payload = b"", bytearray()
        return frames
