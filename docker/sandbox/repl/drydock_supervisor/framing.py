"""The host channel's wire format: 4-byte big-endian length, then UTF-8 JSON (see
README.md), and the supervisor's own diagnostics and exit signal."""

from __future__ import annotations

import json
import struct
import sys
from collections.abc import Callable, Iterator
from typing import Any

PROTOCOL_VERSION = 1
HEADER = struct.Struct(">I")
MAX_HOST_FRAME = 16 * 1024 * 1024
# The kernel caps result/error text, but a repr, its HTML and a figure's base64 PNG can
# each be up to the exec's output cap; anything beyond this is treated as a corrupt channel.
MAX_KERNEL_FRAME = 96 * 1024 * 1024
READ_CHUNK = 256 * 1024
DEFAULT_TIMEOUT_MS = 30_000
DEFAULT_MAX_OUTPUT_BYTES = 1024 * 1024

def log(message: str) -> None:
    """Diagnostics go to stderr, i.e. the container log, never to the host channel."""
    try:
        sys.stderr.write(f"drydock-repl: {message}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


class Exit(Exception):
    """Unwinds the event loop; the supervisor cleans up and exits with ``code``."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def encode_frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
    data = body.encode("utf-8", "replace")  # lone surrogates become "?"
    return HEADER.pack(len(data)) + data


class FrameReader:
    """Incremental decoder for length-prefixed frames.

    ``feed`` yields complete frame bodies; a frame longer than ``max_len`` yields
    ``OVERSIZE`` once and its body is skipped as it streams in. A frame may announce raw
    bytes after it (``fs-write``): the caller, handed that frame, calls ``expect_raw``
    before taking the next one, and those bytes go to its sink as they arrive, straight
    from the chunk read (not through the buffer), never read as frames.
    """

    OVERSIZE = object()

    def __init__(self, max_len: int) -> None:
        self.max_len = max_len
        self._buf = bytearray()
        self._skip = 0
        self._raw = 0
        self._sink: Callable[[memoryview], None] | None = None

    def expect_raw(self, count: int, sink: Callable[[memoryview], None]) -> None:
        """The next ``count`` bytes after the frame just yielded go to ``sink``."""
        self._raw = count
        self._sink = sink

    def _to_sink(self, data: memoryview) -> None:
        self._raw -= len(data)
        sink = self._sink
        if not self._raw:
            self._sink = None
        assert sink is not None
        sink(data)

    def feed(self, data: bytes) -> Iterator[Any]:
        view = memoryview(data)
        while True:
            if self._raw:
                if self._buf:  # bytes that came in the chunk of the announcing frame
                    take = min(self._raw, len(self._buf))
                    chunk = bytes(self._buf[:take])
                    del self._buf[:take]
                    self._to_sink(memoryview(chunk))
                    continue
                if not view:
                    return
                take = min(self._raw, len(view))
                self._to_sink(view[:take])
                view = view[take:]
                continue
            if view:
                self._buf += view
                view = view[len(view) :]
            if self._skip:
                dropped = min(self._skip, len(self._buf))
                del self._buf[:dropped]
                self._skip -= dropped
                if self._skip:
                    return
            if len(self._buf) < HEADER.size:
                return
            (length,) = HEADER.unpack_from(self._buf)
            if length > self.max_len:
                del self._buf[: HEADER.size]
                self._skip = length
                yield self.OVERSIZE
                continue
            end = HEADER.size + length
            if len(self._buf) < end:
                return
            frame = bytes(self._buf[HEADER.size : end])
            del self._buf[:end]
            yield frame
