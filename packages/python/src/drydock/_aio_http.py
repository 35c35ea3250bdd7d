"""The asyncio client's HTTP: HTTP/1.1 written and read directly on asyncio streams (no
thread executor), keep-alive connections pooled per client, the same retry rules as the
sync client, and streamed bodies both ways."""

from __future__ import annotations

import asyncio
import os
import ssl
from typing import IO, Any, AsyncIterable, AsyncIterator, Iterable, Mapping, Union
from urllib.parse import urlsplit

from ._wire import (
    CHUNK_BYTES,
    IDEMPOTENT_METHODS,
    RETRYABLE_STATUS,
    USER_AGENT,
    RetryPolicy,
    decode_json,
    encode_json,
    error_from_answer,
    retry_delay,
)
from .errors import DrydockError

AsyncBody = Union[bytes, bytearray, memoryview, IO[bytes], Iterable[bytes], AsyncIterable[bytes], None]

MAX_IDLE = 16
_MAX_HEADER_LINES = 200


class _Closed(Exception):
    """The connection ended before a whole answer (nothing useful was read)."""


class Headers:
    """An answer's headers: case-insensitive ``get``."""

    __slots__ = ("_values",)

    def __init__(self, values: dict[str, str]) -> None:
        self._values = values

    def get(self, name: str, default: str | None = None) -> str | None:
        return self._values.get(name.lower(), default)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._values

    def items(self) -> list[tuple[str, str]]:
        return list(self._values.items())


class _Conn:
    __slots__ = ("reader", "writer", "loop")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.loop = asyncio.get_running_loop()

    def usable(self) -> bool:
        return self.loop is asyncio.get_running_loop() and not self.reader.at_eof() and not self.writer.is_closing()

    def close(self) -> None:
        try:
            self.writer.close()
        except (RuntimeError, OSError):  # its loop is closed
            pass


class _Response:
    """Status and headers read; the body is read by ``read_chunk`` per its framing."""

    def __init__(self, transport: AsyncTransport, conn: _Conn, method: str, status: int, headers: Headers, http10: bool) -> None:
        self._transport = transport
        self._conn: _Conn | None = conn
        self.status = status
        self.headers = headers
        connection = (headers.get("connection") or "").lower()
        self.will_close = "close" in connection or (http10 and "keep-alive" not in connection)
        encoding = (headers.get("transfer-encoding") or "").lower()
        length = headers.get("content-length")
        self._chunked = "chunked" in encoding
        self._remaining: int | None = None
        self._chunk_left = 0
        self._done = False
        if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
            self._done = True
        elif self._chunked:
            pass
        elif length is not None:
            try:
                self._remaining = int(length)
            except ValueError:
                raise DrydockError("INVALID_RESPONSE", f"A bad Content-Length: {length!r}", status) from None
            self._done = self._remaining == 0
        else:
            self.will_close = True  # the body ends with the connection

    @property
    def request_id(self) -> str | None:
        return self.headers.get("x-request-id")

    async def read_chunk(self, size: int = CHUNK_BYTES) -> bytes:
        """What arrives next of the body, or b"" at its end."""
        if self._done or self._conn is None:
            self._finish()
            return b""
        reader = self._conn.reader
        try:
            data: bytes = await self._transport._timed(self._read(reader, size))
        except (OSError, asyncio.IncompleteReadError, ValueError, _Closed) as error:
            self.close()
            raise DrydockError("NETWORK_ERROR", f"The answer was cut: {_describe(error)}", 0, None, self.request_id) from None
        if not data:
            self._finish()
        return data

    async def _read(self, reader: asyncio.StreamReader, size: int) -> bytes:
        if self._chunked:
            if self._chunk_left == 0:
                line = await reader.readline()
                if not line:
                    raise _Closed()
                try:
                    self._chunk_left = int(line.split(b";", 1)[0].strip(), 16)
                except ValueError:
                    raise _Closed() from None
                if self._chunk_left == 0:
                    while True:  # trailers, up to the blank line
                        trailer = await reader.readline()
                        if not trailer or trailer in (b"\r\n", b"\n"):
                            break
                    self._done = True
                    return b""
            data = await reader.read(min(size, self._chunk_left))
            if not data:
                raise _Closed()
            self._chunk_left -= len(data)
            if self._chunk_left == 0:
                await reader.readexactly(2)
            return data
        if self._remaining is not None:
            data = await reader.read(min(size, self._remaining))
            if not data:
                raise _Closed()
            self._remaining -= len(data)
            if self._remaining == 0:
                self._done = True
            return data
        data = await reader.read(size)
        if not data:
            self._done = True
        return data

    async def read_all(self) -> bytes:
        parts: list[bytes] = []
        while True:
            data = await self.read_chunk(1 << 20)
            if not data:
                return b"".join(parts)
            parts.append(data)

    def _finish(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            if self._done and not self.will_close:
                self._transport._release(conn)
            else:
                self._transport._discard(conn)

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            if self._done and not self.will_close:
                self._transport._release(conn)
            else:
                self._transport._discard(conn)


class AsyncAnswer:
    __slots__ = ("status", "headers", "body")

    def __init__(self, status: int, headers: Headers, body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body

    @property
    def request_id(self) -> str | None:
        return self.headers.get("x-request-id")

    def json(self) -> Any:
        return decode_json(self.body, self.status, self.request_id)


class AsyncStreamedAnswer:
    """A 2xx answer whose body is read as it arrives: ``async for chunk in answer``.
    Closing it early drops its connection."""

    def __init__(self, response: _Response) -> None:
        self._response = response
        self.status = response.status
        self.headers = response.headers

    @property
    def request_id(self) -> str | None:
        return self._response.request_id

    async def read1(self, size: int = CHUNK_BYTES) -> bytes:
        return await self._response.read_chunk(size)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while True:
            data = await self._response.read_chunk()
            if not data:
                return
            yield data

    def close(self) -> None:
        self._response.close()

    async def aclose(self) -> None:
        self._response.close()

    async def __aenter__(self) -> AsyncStreamedAnswer:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._response.close()


class AsyncTransport:
    """Requests to one gateway over asyncio streams, with pooled keep-alive connections."""

    def __init__(
        self,
        url: str,
        api_key: str,
        *,
        timeout: float | None,
        connect_timeout: float,
        retry: RetryPolicy,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        parts = urlsplit(url.rstrip("/"))
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"AsyncDrydock: `url` must be an http:// or https:// URL (got {url!r}).")
        self.base_url = f"{parts.scheme}://{parts.netloc}{parts.path}"
        self._prefix = parts.path
        self._host = parts.hostname
        self._tls = parts.scheme == "https"
        self._port = parts.port or (443 if self._tls else 80)
        self._ssl: ssl.SSLContext | None = (ssl_context or ssl.create_default_context()) if self._tls else None
        default_port = (self._tls and self._port == 443) or (not self._tls and self._port == 80)
        host_header = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
        self._host_header = host_header if default_port else f"{host_header}:{self._port}"
        self._timeout = timeout
        self._connect_timeout = connect_timeout
        self.retry = retry
        self._headers = {"Authorization": f"Bearer {api_key}", "User-Agent": USER_AGENT, "Accept": "application/json"}
        self._idle: list[_Conn] = []
        self._closed = False

    # -- connections ----------------------------------------------------------------

    async def _connect(self) -> _Conn:
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection(self._host, self._port, ssl=self._ssl, limit=1 << 20),
            self._connect_timeout,
        )
        return _Conn(reader, writer)

    def _release(self, conn: _Conn) -> None:
        if self._closed or len(self._idle) >= MAX_IDLE or not conn.usable():
            conn.close()
        else:
            self._idle.append(conn)

    def _discard(self, conn: _Conn) -> None:
        conn.close()

    def _take_idle(self) -> _Conn | None:
        while self._idle:
            conn = self._idle.pop()
            if conn.usable():
                return conn
            conn.close()
        return None

    async def close(self) -> None:
        self._closed = True
        idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()
            try:
                await conn.writer.wait_closed()
            except (OSError, RuntimeError, ssl.SSLError):
                pass

    async def _timed(self, awaitable: Any) -> Any:
        if self._timeout is None:
            return await awaitable
        return await asyncio.wait_for(awaitable, self._timeout)

    # -- requests -------------------------------------------------------------------

    async def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        body: AsyncBody = None,
        headers: Mapping[str, str] | None = None,
        retry_safe: bool | None = None,
    ) -> AsyncAnswer:
        response = await self._send(method, path, json, body, headers, retry_safe)
        try:
            data = await response.read_all()
        except BaseException:
            response.close()
            raise
        if response.status >= 300:
            raise error_from_answer(response.status, data, response.request_id)
        return AsyncAnswer(response.status, response.headers, data)

    async def json(self, method: str, path: str, json: Any = None, *, retry_safe: bool | None = None) -> Any:
        answer = await self.request(method, path, json=json, retry_safe=retry_safe)
        return answer.json() if answer.body else None

    async def stream(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        body: AsyncBody = None,
        headers: Mapping[str, str] | None = None,
        retry_safe: bool | None = None,
    ) -> AsyncStreamedAnswer:
        response = await self._send(method, path, json, body, headers, retry_safe)
        if response.status >= 300:
            try:
                data = await response.read_all()
            finally:
                response.close()
            raise error_from_answer(response.status, data, response.request_id)
        return AsyncStreamedAnswer(response)

    async def _send(
        self,
        method: str,
        path: str,
        json: Any,
        body: AsyncBody,
        headers: Mapping[str, str] | None,
        retry_safe: bool | None,
    ) -> _Response:
        hdrs = dict(self._headers)
        if json is not None:
            body = encode_json(json)
            hdrs["Content-Type"] = "application/json"
        if headers:
            hdrs.update(headers)
        if isinstance(body, (bytearray, memoryview)):
            body = bytes(body)
        start = _replay_point(body)
        replayable = body is None or isinstance(body, bytes) or start is not None
        may_repeat = (method in IDEMPOTENT_METHODS if retry_safe is None else retry_safe) and replayable
        attempts = max(1, self.retry.attempts)
        target = self._prefix + path
        failure: BaseException | None = None
        attempt = 0
        while True:
            attempt += 1
            last = attempt >= attempts
            if self._closed:
                raise DrydockError("CLIENT_CLOSED", "This AsyncDrydock client was closed.", 0)
            conn = self._take_idle()
            reused = conn is not None
            if conn is None:
                try:
                    conn = await self._connect()
                except (OSError, asyncio.TimeoutError) as error:
                    # Nothing was sent: safe to try again whatever the method.
                    if last:
                        raise DrydockError("NETWORK_ERROR", f"Could not reach Drydock at {self.base_url}: {_describe(error)}", 0) from None
                    await asyncio.sleep(retry_delay(attempt, None, self.retry))
                    continue
            if start is not None and attempt > 1:
                body.seek(start)  # type: ignore[union-attr]
            sent = True
            try:
                await self._write_request(conn, method, target, hdrs, body)
            except (OSError, _Closed) as error:
                sent = False
                failure = error
            except BaseException:
                conn.close()  # cancelled mid-request: the connection is in an unknown state
                raise
            response: _Response | None = None
            try:
                # After a failed send the server may still have answered (a refused
                # upload): read that answer rather than the broken pipe.
                response = await self._timed(self._read_head(conn, method))
            except (OSError, asyncio.IncompleteReadError, asyncio.TimeoutError, ValueError, _Closed) as error:
                if sent:
                    failure = error
            except BaseException:
                conn.close()  # cancelled while waiting: the connection is in an unknown state
                raise
            if response is None:
                conn.close()
                if may_repeat and not last:
                    await asyncio.sleep(0 if reused and attempt == 1 else retry_delay(attempt, None, self.retry))
                    continue
                raise DrydockError("NETWORK_ERROR", f"{method} {path} failed: {_describe(failure)}", 0) from None
            if not sent:
                response.will_close = True
            if response.status in RETRYABLE_STATUS and may_repeat and not last:
                retry_after = response.headers.get("retry-after")
                try:
                    await response.read_all()
                except DrydockError:
                    pass
                await asyncio.sleep(retry_delay(attempt, retry_after, self.retry))
                continue
            return response

    async def _write_request(self, conn: _Conn, method: str, target: str, headers: dict[str, str], body: AsyncBody) -> None:
        lines = [f"{method} {target} HTTP/1.1", f"Host: {self._host_header}"]
        lines.extend(f"{k}: {v}" for k, v in headers.items())
        writer = conn.writer
        if body is None:
            if method in ("POST", "PUT", "PATCH"):
                lines.append("Content-Length: 0")
            writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
            await writer.drain()
            return
        if isinstance(body, bytes):
            lines.append(f"Content-Length: {len(body)}")
            writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
            await writer.drain()
            return
        size = _remaining_size(body) if "Content-Length" not in headers else None
        chunked = size is None and "Content-Length" not in headers
        if size is not None:
            lines.append(f"Content-Length: {size}")
        elif chunked:
            lines.append("Transfer-Encoding: chunked")
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        async for chunk in _chunks(body):
            if not chunk:
                continue
            if chunked:
                writer.write(b"%X\r\n" % len(chunk) + chunk + b"\r\n")
            else:
                writer.write(chunk)
            await writer.drain()
        if chunked:
            writer.write(b"0\r\n\r\n")
        await writer.drain()

    async def _read_head(self, conn: _Conn, method: str) -> _Response:
        reader = conn.reader
        while True:
            line = await reader.readline()
            if not line:
                raise _Closed("the server closed the connection without an answer")
            try:
                version, status_text = line.decode("latin-1").split(" ", 2)[:2]
                status = int(status_text)
            except ValueError:
                raise DrydockError("INVALID_RESPONSE", f"Not an HTTP status line: {line[:80]!r}", 0) from None
            values: dict[str, str] = {}
            for _ in range(_MAX_HEADER_LINES):
                raw = await reader.readline()
                if not raw:
                    raise _Closed("the connection ended inside the headers")
                if raw in (b"\r\n", b"\n"):
                    break
                name, _, value = raw.decode("latin-1").partition(":")
                key = name.strip().lower()
                value = value.strip()
                values[key] = f"{values[key]}, {value}" if key in values else value
            else:
                raise DrydockError("INVALID_RESPONSE", "Too many header lines.", status)
            if status == 100:
                continue  # 100 Continue: the real answer follows
            return _Response(self, conn, method, status, Headers(values), version == "HTTP/1.0")


async def _chunks(body: AsyncBody) -> AsyncIterator[bytes]:
    if body is None:
        return
    read = getattr(body, "read", None)
    if read is not None:
        while True:
            data = read(CHUNK_BYTES)
            if not data:
                return
            yield data
    elif hasattr(body, "__aiter__"):
        async for chunk in body:
            yield bytes(chunk)
    else:
        for chunk in body:
            yield bytes(chunk)


def _replay_point(body: AsyncBody) -> int | None:
    seekable = getattr(body, "seekable", None)
    if seekable is not None and getattr(body, "read", None) is not None:
        try:
            if seekable():
                return int(body.tell())  # type: ignore[union-attr]
        except (OSError, ValueError):
            return None
    return None


def _remaining_size(body: AsyncBody) -> int | None:
    fileno = getattr(body, "fileno", None)
    if fileno is None:
        return None
    try:
        stat = os.fstat(fileno())
        if stat.st_mode & 0o170000 != 0o100000:
            return None
        return max(0, stat.st_size - int(body.tell()))  # type: ignore[union-attr]
    except (OSError, ValueError, AttributeError):
        return None


def _describe(error: BaseException | None) -> str:
    if error is None:
        return "unknown error"
    if isinstance(error, (asyncio.TimeoutError, TimeoutError)):
        return "timed out"
    text = str(error)
    if isinstance(error, _Closed):
        return text or "the server closed the connection"
    return f"{type(error).__name__}: {text}" if text else type(error).__name__

