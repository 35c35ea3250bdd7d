"""What both clients share, without I/O: URLs, bodies, error answers, and incremental
decoders of the streamed answers (server-sent events, NDJSON)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Mapping
from urllib.parse import quote

from ._version import __version__
from .errors import DrydockError

USER_AGENT = f"drydock-client-python/{__version__}"
IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS"})
# Answers that mean "not now": PostgreSQL or Redis restarting, no worker free, a rate limit.
RETRYABLE_STATUS = frozenset({429, 502, 503})
# Bytes per chunk of a streamed upload (NDJSON batches, files) and per read of a download.
CHUNK_BYTES = 64 * 1024
# Items per chunk of a batch's body at most, so that on_sent reports progress on small
# items too (a chunk per 100 items costs nothing next to their encoding).
ITEMS_PER_CHUNK = 100

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Retries of what is safe to repeat.

    ``attempts`` in all (1 turns retries off); ``max_delay`` caps each wait in seconds,
    whatever ``Retry-After`` says.
    """

    attempts: int = 3
    max_delay: float = 10.0


def segment(value: str) -> str:
    """One path segment (an id or a name), percent-encoded."""
    return quote(value, safe="")


def with_query(path: str, query: Mapping[str, Any] | None) -> str:
    """``path?key=value&...``, leaving out None values; booleans as true/false."""
    if not query:
        return path
    parts = []
    for key, value in query.items():
        if value is None:
            continue
        if value is True or value is False:
            value = "true" if value else "false"
        parts.append(f"{quote(key, safe='')}={quote(str(value), safe='/')}")
    return f"{path}?{'&'.join(parts)}" if parts else path


def encode_json(value: Any) -> bytes:
    return _dumps(value).encode("utf-8")


def compact(mapping: Mapping[str, Any]) -> dict[str, Any]:
    """The entries whose value is not None."""
    return {k: v for k, v in mapping.items() if v is not None}


def decode_json(body: bytes, status: int, request_id: str | None) -> Any:
    try:
        return json.loads(body)
    except ValueError as error:
        raise DrydockError(
            "INVALID_RESPONSE", f"The answer (HTTP {status}) is not JSON: {error}", status, None, request_id
        ) from None


def error_from_answer(status: int, body: bytes, request_id: str | None) -> DrydockError:
    """The platform's error envelope ``{"error": {code, message, details?}}`` as a DrydockError."""
    try:
        envelope = json.loads(body) if body else None
    except ValueError:
        envelope = None
    error = envelope.get("error") if isinstance(envelope, dict) else None
    if isinstance(error, dict) and isinstance(error.get("code"), str):
        details = error.get("details")
        return DrydockError(
            error["code"],
            str(error.get("message") or error["code"]),
            status,
            details if isinstance(details, dict) else None,
            request_id,
        )
    text = body[:200].decode("utf-8", "replace").strip()
    return DrydockError("HTTP_ERROR", f"HTTP {status}" + (f": {text}" if text else ""), status, None, request_id)


def retry_delay(attempt: int, retry_after: str | None, policy: RetryPolicy) -> float:
    """Seconds to wait before attempt ``attempt + 1``: Retry-After, else a short backoff."""
    if retry_after:
        try:
            seconds = float(retry_after)
            if seconds > 0:
                return min(policy.max_delay, seconds)
        except ValueError:
            pass
    return min(policy.max_delay, 0.2 * (2.0**attempt))


def ndjson_chunks(first: Any, items: Iterable[Any], on_sent: Callable[[int], object] | None = None) -> Iterator[bytes]:
    """The NDJSON body of a batch: the options line, then one item a line, in chunks of
    about CHUNK_BYTES or ITEMS_PER_CHUNK items, whichever comes first (one chunk in memory
    at a time). ``on_sent`` gets the count of items handed to the connection so far, after
    each chunk went, the last call being the total."""
    buffer = bytearray(encode_json(first))
    buffer += b"\n"
    sent = 0
    pending = 0
    for item in items:
        buffer += encode_json(item)
        buffer += b"\n"
        pending += 1
        if pending >= ITEMS_PER_CHUNK or len(buffer) >= CHUNK_BYTES:
            yield bytes(buffer)
            buffer.clear()
            sent += pending
            pending = 0
            if on_sent is not None:
                on_sent(sent)
    if buffer:
        yield bytes(buffer)
    if on_sent is not None and (pending or sent == 0):
        on_sent(sent + pending)


class LineDecoder:
    """Bytes in, complete lines out (without their end of line)."""

    __slots__ = ("_buffer",)

    def __init__(self) -> None:
        self._buffer = b""

    def feed(self, data: bytes) -> list[bytes]:
        if not data:
            return []
        buffer = self._buffer + data if self._buffer else data
        lines = buffer.split(b"\n")
        self._buffer = lines.pop()
        return [line[:-1] if line.endswith(b"\r") else line for line in lines]

    def flush(self) -> list[bytes]:
        rest, self._buffer = self._buffer, b""
        return [rest.rstrip(b"\r")] if rest.strip() else []


class SSEDecoder:
    """Server-sent events: bytes in, ``(event, data)`` pairs out (comments skipped)."""

    __slots__ = ("_lines", "_event", "_data")

    def __init__(self) -> None:
        self._lines = LineDecoder()
        self._event = "message"
        self._data: list[str] = []

    def feed(self, data: bytes) -> list[tuple[str, str]]:
        return self._take(self._lines.feed(data))

    def flush(self) -> list[tuple[str, str]]:
        events = self._take(self._lines.flush())
        if self._data:
            events.append((self._event, "\n".join(self._data)))
            self._data = []
        return events

    def _take(self, lines: list[bytes]) -> list[tuple[str, str]]:
        events: list[tuple[str, str]] = []
        for raw in lines:
            if not raw:
                if self._data:
                    events.append((self._event, "\n".join(self._data)))
                self._event = "message"
                self._data = []
                continue
            line = raw.decode("utf-8", "replace")
            if line.startswith("data:"):
                self._data.append(line[6:] if line.startswith("data: ") else line[5:])
            elif line.startswith("event:"):
                self._event = line[6:].strip()
        return events


def event_payload(data: str) -> dict[str, Any]:
    try:
        payload = json.loads(data)
    except ValueError:
        raise DrydockError("INVALID_RESPONSE", f"An event's data is not JSON: {data[:200]!r}", 200) from None
    return payload if isinstance(payload, dict) else {"value": payload}


def platform_error(payload: Mapping[str, Any], status: int = 0) -> DrydockError | None:
    """An ``error`` event from the platform (``{code, message}``), not a Python exception."""
    code = payload.get("code")
    if not isinstance(code, str):
        return None
    details = payload.get("details")
    return DrydockError(code, str(payload.get("message") or code), status, details if isinstance(details, dict) else None)


def stream_ended(what: str) -> DrydockError:
    return DrydockError("INVALID_RESPONSE", f"The {what} stream ended before its result.", 200)
