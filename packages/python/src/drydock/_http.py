"""The sync client's HTTP: http.client keep-alive connections, one pool per thread,
retries only where repeating is safe, and streamed bodies both ways."""

from __future__ import annotations

import http.client
import io
import os
import select
import socket
import ssl
import threading
import time
from typing import IO, Any, Iterable, Iterator, Mapping, Union
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

Body = Union[bytes, bytearray, memoryview, IO[bytes], Iterable[bytes], None]

# Idle connections kept per thread; more are closed when returned.
MAX_IDLE_PER_THREAD = 8
_EMPTY_BODY_STATUS = frozenset({204, 304})


class _Connection(http.client.HTTPConnection):
    """Sets TCP_NODELAY and, once connected, the read timeout (None: wait as long as it takes)."""

    read_timeout: float | None = None

    def connect(self) -> None:
        super().connect()
        _tune(self.sock, self.read_timeout)


class _TLSConnection(http.client.HTTPSConnection):
    read_timeout: float | None = None

    def connect(self) -> None:
        super().connect()
        _tune(self.sock, self.read_timeout)


def _tune(sock: socket.socket, read_timeout: float | None) -> None:
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except OSError:
        pass
    sock.settimeout(read_timeout)


def _dropped(conn: http.client.HTTPConnection) -> bool:
    """An idle keep-alive connection the server closed (readable: EOF) or that broke."""
    sock = conn.sock
    if sock is None:
        return True
    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)


class Answer:
    """A whole answer: status, headers and body bytes."""

    __slots__ = ("status", "headers", "body")

    def __init__(self, status: int, headers: http.client.HTTPMessage, body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body

    @property
    def request_id(self) -> str | None:
        return self.headers.get("x-request-id")

    def json(self) -> Any:
        return decode_json(self.body, self.status, self.request_id)


class StreamedAnswer:
    """A 2xx answer whose body is read as it arrives. Closing it early drops its
    connection; reading it to the end returns the connection to the pool."""

    def __init__(self, transport: SyncTransport, conn: http.client.HTTPConnection, response: http.client.HTTPResponse) -> None:
        self._transport = transport
        self._conn: http.client.HTTPConnection | None = conn
        self._response = response
        self.status = response.status
        self.headers = response.headers

    @property
    def request_id(self) -> str | None:
        return self.headers.get("x-request-id")

    def read1(self, size: int = CHUNK_BYTES) -> bytes:
        """What has arrived (at least one byte), or b"" at the end of the body."""
        if self._conn is None:
            return b""
        try:
            data = self._response.read1(size)
        except (OSError, http.client.HTTPException) as error:
            self.close()
            raise DrydockError("NETWORK_ERROR", f"The answer was cut: {_describe(error)}", 0, None, self.request_id) from None
        if not data:
            self._finish()
        return data

    def __iter__(self) -> Iterator[bytes]:
        while True:
            data = self.read1()
            if not data:
                return
            yield data

    def _finish(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            # read1() ends a Content-Length body with b"" without closing the response,
            # and http.client refuses the connection's next request until it is closed.
            self._response.close()
            self._transport._release(conn, self._response)

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            if self._response.isclosed() and not self._response.will_close:
                self._transport._release(conn, self._response)
            else:
                conn.close()

    def __enter__(self) -> StreamedAnswer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        conn = getattr(self, "_conn", None)
        if conn is not None:
            conn.close()


class SyncTransport:
    """Requests to one gateway, over keep-alive connections pooled per thread."""

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
            raise ValueError(f"Drydock: `url` must be an http:// or https:// URL (got {url!r}).")
        self.base_url = f"{parts.scheme}://{parts.netloc}{parts.path}"
        self._prefix = parts.path
        self._host = parts.hostname
        self._port = parts.port
        self._tls = parts.scheme == "https"
        self._ssl_context = ssl_context
        self._timeout = timeout
        self._connect_timeout = connect_timeout
        self.retry = retry
        self._headers = {"Authorization": f"Bearer {api_key}", "User-Agent": USER_AGENT, "Accept": "application/json"}
        self._local = threading.local()
        self._all: set[http.client.HTTPConnection] = set()
        self._lock = threading.Lock()
        self._closed = False

    # -- connections ----------------------------------------------------------------

    def _idle(self) -> list[http.client.HTTPConnection]:
        idle: list[http.client.HTTPConnection] | None = getattr(self._local, "idle", None)
        if idle is None:
            idle = self._local.idle = []
        return idle

    def _acquire(self) -> tuple[http.client.HTTPConnection, bool]:
        if self._closed:
            raise DrydockError("CLIENT_CLOSED", "This Drydock client was closed.", 0)
        idle = self._idle()
        while idle:
            kept = idle.pop()
            if not _dropped(kept):
                return kept, True
            self._discard(kept)
        conn: http.client.HTTPConnection
        if self._tls:
            conn = _TLSConnection(self._host, self._port, timeout=self._connect_timeout, context=self._ssl_context, blocksize=CHUNK_BYTES)
        else:
            conn = _Connection(self._host, self._port, timeout=self._connect_timeout, blocksize=CHUNK_BYTES)
        conn.read_timeout = self._timeout  # type: ignore[attr-defined]
        with self._lock:
            self._all.add(conn)
        return conn, False

    def _release(self, conn: http.client.HTTPConnection, response: http.client.HTTPResponse) -> None:
        idle = self._idle()
        if response.will_close or self._closed or len(idle) >= MAX_IDLE_PER_THREAD or conn.sock is None:
            self._discard(conn)
        else:
            idle.append(conn)

    def _discard(self, conn: http.client.HTTPConnection) -> None:
        conn.close()
        with self._lock:
            self._all.discard(conn)

    def close(self) -> None:
        """Closes every connection of every thread."""
        self._closed = True
        with self._lock:
            conns, self._all = list(self._all), set()
        for conn in conns:
            conn.close()

    # -- requests -------------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        body: Body = None,
        headers: Mapping[str, str] | None = None,
        retry_safe: bool | None = None,
    ) -> Answer:
        """Sends a request and reads the whole answer; a non-2xx answer raises DrydockError."""
        conn, response = self._send(method, path, json, body, headers, retry_safe)
        try:
            data = response.read()
        except (OSError, http.client.HTTPException) as error:
            conn.close()
            raise DrydockError("NETWORK_ERROR", f"The answer was cut: {_describe(error)}", 0, None, response.headers.get("x-request-id")) from None
        self._release(conn, response)
        if response.status >= 300:
            raise error_from_answer(response.status, data, response.headers.get("x-request-id"))
        return Answer(response.status, response.headers, data)

    def json(self, method: str, path: str, json: Any = None, *, retry_safe: bool | None = None) -> Any:
        answer = self.request(method, path, json=json, retry_safe=retry_safe)
        return answer.json() if answer.body else None

    def stream(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        body: Body = None,
        headers: Mapping[str, str] | None = None,
        retry_safe: bool | None = None,
    ) -> StreamedAnswer:
        """Sends a request; a 2xx answer's body is read as it arrives (close it when done)."""
        conn, response = self._send(method, path, json, body, headers, retry_safe)
        if response.status >= 300:
            try:
                data = response.read()
            except (OSError, http.client.HTTPException):
                data = b""
            self._release(conn, response)
            raise error_from_answer(response.status, data, response.headers.get("x-request-id"))
        return StreamedAnswer(self, conn, response)

    def _send(
        self,
        method: str,
        path: str,
        json: Any,
        body: Body,
        headers: Mapping[str, str] | None,
        retry_safe: bool | None,
    ) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
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
        if body is not None and not isinstance(body, bytes) and "Content-Length" not in hdrs:
            size = _remaining_size(body)
            if size is not None:
                hdrs["Content-Length"] = str(size)
        may_repeat = (method in IDEMPOTENT_METHODS if retry_safe is None else retry_safe) and replayable
        attempts = max(1, self.retry.attempts)
        target = self._prefix + path
        failure: BaseException | None = None
        attempt = 0
        while True:
            attempt += 1
            last = attempt >= attempts
            conn, reused = self._acquire()
            if conn.sock is None:
                try:
                    conn.connect()
                except OSError as error:
                    # Nothing was sent: safe to try again whatever the method.
                    self._discard(conn)
                    if last:
                        raise DrydockError("NETWORK_ERROR", f"Could not reach Drydock at {self.base_url}: {_describe(error)}", 0) from None
                    time.sleep(retry_delay(attempt, None, self.retry))
                    continue
            if start is not None and attempt > 1:
                body.seek(start)  # type: ignore[union-attr]
            try:
                conn.request(method, target, body=body, headers=hdrs)
                sent = True
            except (OSError, http.client.HTTPException) as error:
                sent = False
                failure = error
            response: http.client.HTTPResponse | None = None
            try:
                # After a failed send the server may still have answered (a refused
                # upload): read that answer rather than the broken pipe.
                response = conn.getresponse()
            except (OSError, http.client.HTTPException) as error:
                if sent:
                    failure = error
            if response is None:
                self._discard(conn)
                # A request on a reused connection that the server had closed; or an
                # outage. Repeated only when repeating is safe.
                if may_repeat and not last:
                    time.sleep(0 if reused and attempt == 1 else retry_delay(attempt, None, self.retry))
                    continue
                raise DrydockError("NETWORK_ERROR", f"{method} {path} failed: {_describe(failure)}", 0) from None
            if response.status in RETRYABLE_STATUS and may_repeat and not last:
                retry_after = response.headers.get("retry-after")
                try:
                    response.read()
                    self._release(conn, response)
                except (OSError, http.client.HTTPException):
                    self._discard(conn)
                time.sleep(retry_delay(attempt, retry_after, self.retry))
                continue
            if not sent:
                # The answer came before the whole body went: the connection is spent.
                response.will_close = True
            return conn, response


def _replay_point(body: Body) -> int | None:
    """Where a seekable file body starts, so that a retry can send it again."""
    if isinstance(body, io.IOBase) and body.seekable():
        try:
            return body.tell()
        except OSError:
            return None
    return None


def _remaining_size(body: Body) -> int | None:
    """The bytes left in a regular file (a Content-Length); None means chunked."""
    fileno = getattr(body, "fileno", None)
    if fileno is None:
        return None
    try:
        stat = os.fstat(fileno())
        if not (stat.st_mode & 0o170000 == 0o100000):
            return None
        position = body.tell()  # type: ignore[union-attr]
        return max(0, stat.st_size - position)
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        return None


def _describe(error: BaseException | None) -> str:
    if error is None:
        return "unknown error"
    if isinstance(error, (socket.timeout, TimeoutError)):
        return "timed out"
    if isinstance(error, http.client.RemoteDisconnected):
        return "the server closed the connection without an answer"
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
