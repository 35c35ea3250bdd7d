"""The asyncio client: ``AsyncDrydock(url=..., api_key=...)``, the same surface as
``Drydock`` with coroutines and async iterators.

HTTP/1.1 is spoken directly on asyncio streams (no thread executor), over keep-alive
connections pooled per client. Callbacks may be plain functions or coroutine functions
(awaited in order). Use one client per event loop.
"""

from __future__ import annotations

import asyncio
import inspect
import os
from typing import IO, Any, AsyncIterable, AsyncIterator, Awaitable, Callable, Iterable, Literal, Mapping, Sequence, Union, overload

from . import _bodies
from ._aio_http import AsyncBody, AsyncStreamedAnswer, AsyncTransport
from ._bodies import BatchItemArg, LocalFile, NetworkArg
from ._events import FOLLOW_PAGE, FOLLOW_POLL_S, MAX_CUTS, BatchEvents, ProcessEvents, ResultsFrontier, RunEvents, TemplateLogEvents
from ._wire import CHUNK_BYTES, ITEMS_PER_CHUNK, LineDecoder, RetryPolicy, SSEDecoder, compact, decode_json, encode_json, segment, with_query
from .errors import DrydockError, TemplateBuildError
from .types import (
    ArchiveUpload,
    Artifact,
    Batch,
    BatchItem,
    BatchItemEvent,
    BatchPage,
    CommandResult,
    Connection,
    Dataset,
    EditResult,
    Execution,
    ExecutionInterrupt,
    FileEntry,
    FileInfo,
    GrepMode,
    GrepResult,
    ProcessExit,
    ProcessInfo,
    ProcessSignal,
    SandboxTier,
    SessionInfo,
    SessionLimits,
    SessionNetwork,
    SignedUrl,
    Snapshot,
    Template,
    TemplateSummary,
    TemplateVersion,
)

__all__ = [
    "AsyncArtifacts",
    "AsyncBatchRun",
    "AsyncBatches",
    "AsyncDownload",
    "AsyncDrydock",
    "AsyncExecutions",
    "AsyncProcessHandle",
    "AsyncSession",
    "AsyncSessionCommands",
    "AsyncSessions",
    "AsyncSnapshots",
    "AsyncTemplateBuild",
    "AsyncTemplates",
    "AsyncThreadFiles",
]

OutputCallback = Callable[[str], Union[object, Awaitable[object]]]
_SSE = {"Accept": "text/event-stream"}


async def _call(callback: Callable[[Any], Any] | None, value: Any) -> None:
    if callback is not None:
        result = callback(value)
        if inspect.isawaitable(result):
            await result


async def _follow(answer: AsyncStreamedAnswer, reader: RunEvents | ProcessEvents, on_stdout: OutputCallback | None, on_stderr: OutputCallback | None) -> None:
    decoder = SSEDecoder()
    async with answer:
        while True:
            chunk = await answer.read1()
            events = decoder.feed(chunk) if chunk else decoder.flush()
            for event, data in events:
                taken = reader.take(event, data)
                if taken is not None:
                    await _call(on_stdout if taken[0] == "stdout" else on_stderr, taken[1])
            if not chunk:
                return


class AsyncDrydock:
    """The asyncio Drydock client (``async with AsyncDrydock(...) as dd``).

    Options as for ``Drydock``: ``url``/``api_key`` default to ``DRYDOCK_URL`` and
    ``DRYDOCK_API_KEY``; ``timeout`` bounds each wait for bytes in seconds.
    """

    def __init__(
        self,
        url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float | None = None,
        connect_timeout: float = 10.0,
        retry: RetryPolicy | int | None = None,
        ssl_context: Any = None,
    ) -> None:
        url = url or os.environ.get("DRYDOCK_URL")
        api_key = api_key or os.environ.get("DRYDOCK_API_KEY")
        if not url:
            raise ValueError("AsyncDrydock: `url` is required (e.g. http://localhost:8080), or set DRYDOCK_URL.")
        if not api_key:
            raise ValueError("AsyncDrydock: `api_key` is required (a tenant key, ddk_...), or set DRYDOCK_API_KEY.")
        policy = RetryPolicy(attempts=retry) if isinstance(retry, int) else (retry or RetryPolicy())
        self._http = AsyncTransport(url, api_key, timeout=timeout, connect_timeout=connect_timeout, retry=policy, ssl_context=ssl_context)
        self.url = self._http.base_url
        self.sessions = AsyncSessions(self._http)
        self.artifacts = AsyncArtifacts(self._http)
        self.batches = AsyncBatches(self._http)
        self.templates = AsyncTemplates(self._http)
        self.executions = AsyncExecutions(self._http)
        self.snapshots = AsyncSnapshots(self._http)

    def files(self, thread_id: str) -> AsyncThreadFiles:
        """A thread's files, without a session."""
        return AsyncThreadFiles(self._http, thread_id)

    async def close(self) -> None:
        await self._http.close()

    async def __aenter__(self) -> AsyncDrydock:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"AsyncDrydock(url={self.url!r})"


# ---------------------------------------------------------------------------------------
# Sessions


class AsyncSession:
    """A sandbox with a Python REPL for one thread (see ``drydock.Session``).
    ``async with`` ends it on exit."""

    def __init__(self, http: AsyncTransport, info: SessionInfo) -> None:
        self._http = http
        self.info = info
        self._path = _bodies.session_path(info.id)
        self.files = AsyncThreadFiles(http, info.thread_id)
        self.commands = AsyncSessionCommands(http, info.id)

    @property
    def id(self) -> str:
        return self.info.id

    @property
    def thread_id(self) -> str:
        return self.info.thread_id

    async def run(
        self,
        code: str,
        *,
        timeout_ms: int | None = None,
        idempotency_key: str | None = None,
        on_stdout: OutputCallback | None = None,
        on_stderr: OutputCallback | None = None,
    ) -> Execution:
        """Runs code and returns its record whatever its status (see ``Session.run``).
        Cancelling the task only stops waiting: ``interrupt()`` stops the code."""
        body = _bodies.run_body(code, timeout_ms, idempotency_key)
        safe = idempotency_key is not None
        if on_stdout is None and on_stderr is None:
            return Execution.from_json(await self._http.json("POST", self._path + "/executions", body, retry_safe=safe))
        answer = await self._http.stream("POST", self._path + "/executions", json=body, headers=_SSE, retry_safe=safe)
        events = RunEvents("execution")
        await _follow(answer, events, on_stdout, on_stderr)
        return events.result()

    async def interrupt(self) -> list[str]:
        answer = await self._http.json("POST", self._path + "/interrupt")
        return list(answer.get("interrupted") or [])

    async def hibernate(self) -> SessionInfo:
        """See ``Session.hibernate``."""
        self.info = SessionInfo.from_json(await self._http.json("POST", self._path + "/hibernate", retry_safe=True))
        return self.info

    async def snapshot(self, *, ttl_seconds: int | None = None) -> Snapshot:
        """See ``Session.snapshot``."""
        body = compact({"ttlSeconds": ttl_seconds})
        return Snapshot.from_json(await self._http.json("POST", self._path + "/snapshots", body))

    async def refresh(self) -> SessionInfo:
        self.info = SessionInfo.from_json(await self._http.json("GET", self._path))
        return self.info

    async def delete(self) -> None:
        await self._http.request("DELETE", self._path)

    async def network(self, *, verdict: Literal["allowed", "denied"] | None = None, limit: int | None = None, before: str | None = None) -> SessionNetwork:
        query = {"verdict": verdict, "limit": limit, "before": before}
        return SessionNetwork.from_json(await self._http.json("GET", with_query(self._path + "/network", query)))

    async def connections(self, *, verdict: Literal["allowed", "denied"] | None = None, page_size: int | None = None) -> AsyncIterator[Connection]:
        before: str | None = None
        while True:
            page = await self.network(verdict=verdict, limit=page_size, before=before)
            for connection in page.connections:
                yield connection
            if page.next is None or not page.connections or page.next == before:
                return
            before = page.next

    async def narrow_network(self, allow: Sequence[str]) -> SessionInfo:
        self.info = SessionInfo.from_json(await self._http.json("PATCH", self._path + "/network", {"allow": list(allow)}))
        return self.info

    async def __aenter__(self) -> AsyncSession:
        return self

    async def __aexit__(self, *exc: object) -> None:
        try:
            await self.delete()
        except DrydockError as error:
            if error.code not in ("SESSION_NOT_FOUND", "SESSION_ENDED"):
                raise

    def __repr__(self) -> str:
        return f"AsyncSession(id={self.id!r}, thread_id={self.thread_id!r}, status={self.info.status!r})"


class AsyncSessions:
    def __init__(self, http: AsyncTransport) -> None:
        self._http = http

    async def create(
        self,
        *,
        thread_id: str | None = None,
        limits: SessionLimits | Mapping[str, Any] | None = None,
        storage: Literal["tmpfs", "bind"] | None = None,
        datasets: Sequence[Dataset | Mapping[str, Any]] | None = None,
        template: str | None = None,
        network: NetworkArg = None,
        tier: SandboxTier | None = None,
        idle_action: Literal["hibernate", "end"] | None = None,
        from_snapshot: str | None = None,
    ) -> AsyncSession:
        body = _bodies.session_body(thread_id, limits, storage, datasets, template, network, tier, idle_action, from_snapshot)
        return AsyncSession(self._http, SessionInfo.from_json(await self._http.json("POST", "/v1/sessions", body)))

    async def get(self, session_id: str) -> AsyncSession:
        return AsyncSession(self._http, SessionInfo.from_json(await self._http.json("GET", _bodies.session_path(session_id))))

    async def fork(self, snapshot_id: str, *, thread_id: str | None = None) -> AsyncSession:
        """See ``Sessions.fork``."""
        body = _bodies.fork_body(snapshot_id, thread_id)
        return AsyncSession(self._http, SessionInfo.from_json(await self._http.json("POST", "/v1/sessions", body)))

    async def list(self, *, include_ended: bool = False) -> list[AsyncSession]:
        path = with_query("/v1/sessions", {"includeEnded": True} if include_ended else None)
        return [AsyncSession(self._http, SessionInfo.from_json(s)) for s in (await self._http.json("GET", path))["sessions"]]


class AsyncSnapshots:
    """The tenant's snapshots: taken with ``session.snapshot()``, forked with
    ``sessions.fork(id)``."""

    def __init__(self, http: AsyncTransport) -> None:
        self._http = http

    async def list(self) -> list[Snapshot]:
        """Newest first; expired ones are gone."""
        return [Snapshot.from_json(x) for x in (await self._http.json("GET", "/v1/snapshots"))["snapshots"]]

    async def get(self, snapshot_id: str) -> Snapshot:
        return Snapshot.from_json(await self._http.json("GET", _bodies.snapshot_path(snapshot_id)))

    async def delete(self, snapshot_id: str) -> None:
        """Deletes it; the sessions forked from it go on."""
        await self._http.request("DELETE", _bodies.snapshot_path(snapshot_id))


class AsyncExecutions:
    def __init__(self, http: AsyncTransport) -> None:
        self._http = http

    async def get(self, execution_id: str) -> Execution:
        return Execution.from_json(await self._http.json("GET", f"/v1/executions/{segment(execution_id)}"))

    async def interrupt(self, execution_id: str) -> ExecutionInterrupt:
        return ExecutionInterrupt.from_json(await self._http.json("POST", f"/v1/executions/{segment(execution_id)}/interrupt"))


# ---------------------------------------------------------------------------------------
# Commands and background processes


class AsyncSessionCommands:
    def __init__(self, http: AsyncTransport, session_id: str) -> None:
        self._http = http
        self.session_id = session_id
        self._path = _bodies.session_path(session_id)

    @overload
    async def run(
        self,
        cmd: str | Sequence[str],
        *,
        background: Literal[True],
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        stdin: str | None = None,
        idempotency_key: str | None = None,
        on_stdout: OutputCallback | None = None,
        on_stderr: OutputCallback | None = None,
    ) -> AsyncProcessHandle: ...

    @overload
    async def run(
        self,
        cmd: str | Sequence[str],
        *,
        background: Literal[False] = False,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        stdin: str | None = None,
        timeout_ms: int | None = None,
        idempotency_key: str | None = None,
        on_stdout: OutputCallback | None = None,
        on_stderr: OutputCallback | None = None,
    ) -> CommandResult: ...

    async def run(
        self,
        cmd: str | Sequence[str],
        *,
        background: bool = False,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        stdin: str | None = None,
        timeout_ms: int | None = None,
        idempotency_key: str | None = None,
        on_stdout: OutputCallback | None = None,
        on_stderr: OutputCallback | None = None,
    ) -> CommandResult | AsyncProcessHandle:
        """See ``SessionCommands.run``; with ``background=True`` the callbacks are fed by
        a task that ``handle.wait()`` awaits."""
        body = _bodies.command_body(cmd, cwd, env, stdin, None if background else timeout_ms, idempotency_key, background)
        safe = idempotency_key is not None
        if background:
            started = await self._http.json("POST", self._path + "/commands", body, retry_safe=safe)
            if started.get("status") != "running":
                error = started.get("error") or {}
                raise DrydockError("PROCESS_NOT_STARTED", str(error.get("value") or f"the process ended {started.get('status')}"), 200)
            handle = AsyncProcessHandle(self._http, self.session_id, started["id"], started.get("pid"))
            if on_stdout is not None or on_stderr is not None:
                handle._task = asyncio.ensure_future(handle.output(on_stdout=on_stdout, on_stderr=on_stderr))
            return handle
        if on_stdout is None and on_stderr is None:
            return Execution.from_json(await self._http.json("POST", self._path + "/commands", body, retry_safe=safe))
        answer = await self._http.stream("POST", self._path + "/commands", json=body, headers=_SSE, retry_safe=safe)
        events = RunEvents("command")
        await _follow(answer, events, on_stdout, on_stderr)
        return events.result()

    async def list(self) -> list[ProcessInfo]:
        return [ProcessInfo.from_json(p) for p in (await self._http.json("GET", self._path + "/processes"))["processes"]]

    def process(self, process_id: str, pid: int | None = None) -> AsyncProcessHandle:
        return AsyncProcessHandle(self._http, self.session_id, process_id, pid)


class AsyncProcessHandle:
    def __init__(self, http: AsyncTransport, session_id: str, process_id: str, pid: int | None) -> None:
        self._http = http
        self.session_id = session_id
        self.id = process_id
        self.pid = pid
        self._path = f"{_bodies.session_path(session_id)}/processes/{segment(process_id)}"
        self._task: asyncio.Future[ProcessExit] | None = None

    async def output(self, *, on_stdout: OutputCallback | None = None, on_stderr: OutputCallback | None = None) -> ProcessExit:
        answer = await self._http.stream("GET", self._path + "/output", headers=_SSE)
        events = ProcessEvents(self.id)
        await _follow(answer, events, on_stdout, on_stderr)
        return events.result()

    async def wait(self) -> ProcessExit:
        if self._task is None:
            return await self.output()
        return await self._task

    async def info(self) -> ProcessInfo:
        return ProcessInfo.from_json(await self._http.json("GET", self._path))

    async def send_stdin(self, data: str | bytes, *, eof: bool = False) -> None:
        payload = data.encode("utf-8") if isinstance(data, str) else bytes(data)
        path = with_query(self._path + "/stdin", {"eof": True} if eof else None)
        await self._http.request("POST", path, body=payload, headers={"Content-Type": "application/octet-stream"}, retry_safe=False)

    async def close_stdin(self) -> None:
        await self.send_stdin(b"", eof=True)

    async def kill(self, signal: ProcessSignal = "SIGKILL") -> bool:
        return bool((await self._http.json("POST", self._path + "/signal", {"signal": signal})).get("delivered"))

    def __repr__(self) -> str:
        return f"AsyncProcessHandle(id={self.id!r}, pid={self.pid!r})"


# ---------------------------------------------------------------------------------------
# Files and artifacts


class AsyncDownload:
    """A streamed download: ``async for chunk in download``, or ``await read()``."""

    def __init__(self, answer: AsyncStreamedAnswer) -> None:
        self._answer = answer
        self.content_type: str | None = answer.headers.get("content-type")
        length = answer.headers.get("content-length")
        self.size: int | None = int(length) if length and length.isdigit() else None
        self.etag: str | None = answer.headers.get("etag")

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self._answer.__aiter__()

    async def read(self) -> bytes:
        return b"".join([chunk async for chunk in self._answer])

    async def save(self, dest: LocalFile | IO[bytes]) -> int:
        """Writes the rest into a file object, or a local file (replaced once complete)."""
        if hasattr(dest, "write"):
            written = 0
            async for chunk in self._answer:
                dest.write(chunk)
                written += len(chunk)
            return written
        target = os.fspath(dest)
        partial = f"{target}.part"
        try:
            with open(partial, "wb") as out:
                written = await self.save(out)
            os.replace(partial, target)
            return written
        except BaseException:
            try:
                os.unlink(partial)
            except OSError:
                pass
            raise

    async def aclose(self) -> None:
        await self._answer.aclose()

    async def __aenter__(self) -> AsyncDownload:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._answer.aclose()


class AsyncThreadFiles:
    """A thread's files (see ``drydock.ThreadFiles``)."""

    def __init__(self, http: AsyncTransport, thread_id: str) -> None:
        self._http = http
        self.thread_id = thread_id
        self._path = _bodies.thread_files_path(thread_id)

    async def ls(self, path: str = "/") -> list[FileEntry]:
        return [FileEntry.from_json(e) for e in (await self._http.json("GET", with_query(self._path, {"path": path})))["entries"]]

    async def stat(self, path: str) -> FileInfo | FileEntry:
        d = await self._http.json("GET", with_query(self._path + "/stat", {"path": path}))
        return FileInfo.from_json(d) if "sha256" in d else FileEntry.from_json(d)

    async def exists(self, path: str) -> bool:
        try:
            await self.stat(path)
            return True
        except DrydockError as error:
            if error.code == "FILE_NOT_FOUND":
                return False
            raise

    async def read(self, path: str, *, offset: int | None = None, limit: int | None = None) -> str:
        query = {"path": path, "offset": offset, "limit": limit}
        return str((await self._http.json("GET", with_query(self._path + "/read", query)))["content"])

    async def read_text(self, path: str, encoding: str = "utf-8") -> str:
        return (await self.download(path)).decode(encoding)

    async def download(self, path: str) -> bytes:
        return (await self._http.request("GET", with_query(self._path + "/content", {"path": path}))).body

    async def stream(self, path: str) -> AsyncDownload:
        return AsyncDownload(await self._http.stream("GET", with_query(self._path + "/content", {"path": path})))

    async def download_to(self, path: str, dest: LocalFile | IO[bytes]) -> int:
        async with await self.stream(path) as download:
            return await download.save(dest)

    async def write(
        self,
        path: str,
        data: str | bytes | bytearray | memoryview | IO[bytes] | Iterable[bytes] | AsyncIterable[bytes],
        content_type: str | None = None,
    ) -> FileInfo:
        body: AsyncBody
        if isinstance(data, (str, bytes, bytearray, memoryview)):
            body, default_type = _bodies.text_or_bytes(data)
        else:
            body, default_type = data, "application/octet-stream"
        answer = await self._http.request(
            "PUT",
            with_query(self._path + "/content", {"path": path}),
            body=body,
            headers={"Content-Type": content_type or default_type},
        )
        return FileInfo.from_json(answer.json())

    async def upload(self, path: str, source: LocalFile | bytes | IO[bytes] | Iterable[bytes] | AsyncIterable[bytes], content_type: str | None = None) -> FileInfo:
        if isinstance(source, (str, os.PathLike)):
            with _bodies.open_local(source) as handle:
                return await self.write(path, handle, content_type)
        return await self.write(path, source, content_type)

    async def upload_archive(
        self,
        archive: LocalFile | bytes | IO[bytes] | Iterable[bytes] | AsyncIterable[bytes],
        *,
        path: str | None = None,
        gzip: bool = False,
    ) -> ArchiveUpload:
        headers = {"Content-Type": "application/gzip" if gzip else "application/x-tar"}
        target = with_query(self._path + "/archive", {"path": path})
        if isinstance(archive, (str, os.PathLike)):
            with _bodies.open_local(archive) as handle:
                return ArchiveUpload.from_json((await self._http.request("POST", target, body=handle, headers=headers, retry_safe=True)).json())
        return ArchiveUpload.from_json((await self._http.request("POST", target, body=archive, headers=headers, retry_safe=True)).json())

    async def edit(self, path: str, old_string: str, new_string: str, *, replace_all: bool = False) -> EditResult:
        body = {"path": path, "oldString": old_string, "newString": new_string, "replaceAll": replace_all}
        return EditResult.from_json(await self._http.json("POST", self._path + "/edit", body))

    async def glob(self, pattern: str, path: str | None = None) -> list[str]:
        return list((await self._http.json("POST", self._path + "/glob", compact({"pattern": pattern, "path": path})))["paths"])

    async def grep(
        self,
        pattern: str,
        *,
        path: str | None = None,
        glob: str | None = None,
        output_mode: GrepMode | None = None,
        regex: bool | None = None,
        case_insensitive: bool | None = None,
        max_matches: int | None = None,
    ) -> GrepResult:
        body = compact(
            {
                "pattern": pattern,
                "path": path,
                "glob": glob,
                "outputMode": output_mode,
                "regex": regex,
                "caseInsensitive": case_insensitive,
                "maxMatches": max_matches,
            }
        )
        return GrepResult.from_json(await self._http.json("POST", self._path + "/grep", body))

    async def delete(self, path: str) -> None:
        await self._http.request("DELETE", with_query(self._path, {"path": path}))


class AsyncArtifacts:
    def __init__(self, http: AsyncTransport) -> None:
        self._http = http

    async def list(self, *, thread_id: str | None = None, batch_id: str | None = None, limit: int | None = None) -> list[Artifact]:
        query = {"threadId": thread_id, "batchId": batch_id, "limit": limit}
        return [Artifact.from_json(a) for a in (await self._http.json("GET", with_query("/v1/artifacts", query)))["artifacts"]]

    async def get(self, artifact_id: str) -> Artifact:
        return Artifact.from_json(await self._http.json("GET", f"/v1/artifacts/{segment(artifact_id)}"))

    async def download(self, artifact_id: str) -> bytes:
        return (await self._http.request("GET", f"/v1/artifacts/{segment(artifact_id)}/content")).body

    async def stream(self, artifact_id: str) -> AsyncDownload:
        return AsyncDownload(await self._http.stream("GET", f"/v1/artifacts/{segment(artifact_id)}/content"))

    async def download_to(self, artifact_id: str, dest: LocalFile | IO[bytes]) -> int:
        async with await self.stream(artifact_id) as download:
            return await download.save(dest)

    async def signed_url(self, artifact_id: str, *, ttl_seconds: int | None = None) -> SignedUrl:
        d = await self._http.json("POST", f"/v1/artifacts/{segment(artifact_id)}/url", compact({"ttlSeconds": ttl_seconds}), retry_safe=True)
        return SignedUrl(_bodies.absolute_url(self._http.base_url, d["url"]), d["expiresAt"])

    async def delete(self, artifact_id: str) -> None:
        await self._http.request("DELETE", f"/v1/artifacts/{segment(artifact_id)}")


# ---------------------------------------------------------------------------------------
# Batches


ProgressCallback = Callable[[Batch], Union[object, Awaitable[object]]]
ItemCallback = Callable[[BatchItemEvent], Union[object, Awaitable[object]]]


class AsyncBatchRun:
    def __init__(self, http: AsyncTransport, info: Batch) -> None:
        self._http = http
        self.info = info
        self._path = f"/v1/batches/{segment(info.id)}"

    @property
    def id(self) -> str:
        return self.info.id

    async def refresh(self) -> Batch:
        self.info = Batch.from_json(await self._http.json("GET", self._path))
        return self.info

    async def wait(self, *, on_progress: ProgressCallback | None = None, on_item: ItemCallback | None = None) -> Batch:
        while True:
            batch = await self._follow(on_progress, on_item) or await self.refresh()
            if batch.done:
                self.info = batch
                return batch
            await asyncio.sleep(0.5)

    async def _follow(self, on_progress: ProgressCallback | None, on_item: ItemCallback | None) -> Batch | None:
        events = BatchEvents()
        decoder = SSEDecoder()
        try:
            answer = await self._http.stream("GET", self._path + "/events", headers=_SSE)
        except DrydockError as error:
            if error.code == "NETWORK_ERROR":
                return None
            raise
        async with answer:
            try:
                async for chunk in answer:
                    for event, data in decoder.feed(chunk):
                        taken = events.take(event, data)
                        if taken is not None:
                            await _call(on_progress if taken[0] == "progress" else on_item, taken[1])
            except DrydockError as error:
                if error.code != "NETWORK_ERROR":
                    raise
        return events.done

    async def results(self, *, follow: bool = False) -> AsyncIterator[BatchItem]:
        """See ``BatchRun.results``."""
        if follow:
            frontier = ResultsFrontier()
            while True:
                total = (await self.refresh()).total
                fresh = frontier.take(await self.items(offset=frontier.frontier, limit=FOLLOW_PAGE))
                for item in fresh:
                    yield item
                if frontier.complete(total):
                    return
                if not fresh:
                    await asyncio.sleep(FOLLOW_POLL_S)
        lines = LineDecoder()
        async with await self._http.stream("GET", self._path + "/results", headers={"Accept": "application/x-ndjson"}) as answer:
            async for chunk in answer:
                for line in lines.feed(chunk):
                    if line.strip():
                        yield BatchItem.from_json(decode_json(line, 200, answer.request_id))
            for line in lines.flush():
                yield BatchItem.from_json(decode_json(line, 200, answer.request_id))

    async def items(self, *, status: str | None = None, offset: int | None = None, limit: int | None = None) -> list[BatchItem]:
        query = {"status": status, "offset": offset, "limit": limit}
        return [BatchItem.from_json(i) for i in (await self._http.json("GET", with_query(self._path + "/items", query)))["items"]]

    async def cancel(self, *, kill: bool = False) -> Batch:
        self.info = Batch.from_json(await self._http.json("POST", self._path + "/cancel", {"kill": kill}, retry_safe=True))
        return self.info

    def __repr__(self) -> str:
        return f"AsyncBatchRun(id={self.id!r}, status={self.info.status!r}, total={self.info.total})"


async def _ndjson(
    first: Any,
    items: Iterable[BatchItemArg] | AsyncIterable[BatchItemArg],
    on_sent: Callable[[int], Union[object, Awaitable[object]]] | None,
) -> AsyncIterator[bytes]:
    buffer = bytearray(encode_json(first))
    buffer += b"\n"
    sent = 0

    async def each() -> AsyncIterator[BatchItemArg]:
        if hasattr(items, "__aiter__"):
            async for item in items:
                yield item
        else:
            for item in items:
                yield item

    pending = 0
    # Chunked as ndjson_chunks does (the sync client's), with the same on_sent calls.
    async for item in each():
        buffer += encode_json(_bodies.batch_item(item))
        buffer += b"\n"
        pending += 1
        if pending >= ITEMS_PER_CHUNK or len(buffer) >= CHUNK_BYTES:
            yield bytes(buffer)
            buffer.clear()
            sent += pending
            pending = 0
            await _call(on_sent, sent)
    if buffer:
        yield bytes(buffer)
    if pending or sent == 0:
        await _call(on_sent, sent + pending)


class AsyncBatches:
    def __init__(self, http: AsyncTransport) -> None:
        self._http = http

    async def submit(
        self,
        items: Iterable[BatchItemArg] | AsyncIterable[BatchItemArg],
        *,
        limits: SessionLimits | Mapping[str, Any] | None = None,
        timeout_ms: int | None = None,
        concurrency: int | None = None,
        idempotency_key: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        template: str | None = None,
        network: NetworkArg = None,
        on_sent: Callable[[int], Union[object, Awaitable[object]]] | None = None,
        on_progress: ProgressCallback | None = None,
        on_item: ItemCallback | None = None,
    ) -> AsyncBatchRun:
        """Submits items from an iterable or an async iterable, streamed as NDJSON (see
        ``Batches.submit``)."""
        options = _bodies.batch_options(limits, timeout_ms, concurrency, idempotency_key, metadata, template, network)
        answer = await self._http.request(
            "POST", "/v1/batches", body=_ndjson(options, items, on_sent), headers={"Content-Type": "application/x-ndjson"}, retry_safe=False
        )
        run = AsyncBatchRun(self._http, Batch.from_json(answer.json()))
        if on_progress is not None or on_item is not None:
            await run.wait(on_progress=on_progress, on_item=on_item)
        return run

    async def get(self, batch_id: str) -> AsyncBatchRun:
        return AsyncBatchRun(self._http, Batch.from_json(await self._http.json("GET", f"/v1/batches/{segment(batch_id)}")))

    async def list(self, *, limit: int | None = None, before: str | None = None) -> BatchPage:
        d = await self._http.json("GET", with_query("/v1/batches", {"limit": limit, "before": before}))
        return BatchPage([Batch.from_json(b) for b in d["batches"]], d.get("next"))

    async def all(self, *, page_size: int | None = None) -> AsyncIterator[Batch]:
        before: str | None = None
        while True:
            page = await self.list(limit=page_size, before=before)
            for batch in page.batches:
                yield batch
            if page.next is None or not page.batches or page.next == before:
                return
            before = page.next


# ---------------------------------------------------------------------------------------
# Templates


class AsyncTemplateBuild:
    def __init__(self, http: AsyncTransport, name: str, version: int) -> None:
        self._http = http
        self.name = name
        self.version = version
        self._events = TemplateLogEvents()

    @property
    def ref(self) -> str:
        return f"{self.name}:{self.version}"

    async def logs(self) -> AsyncIterator[str]:
        events = self._events
        cuts = 0
        path = f"/v1/templates/{segment(self.name)}/versions/{self.version}/logs"
        while events.status is None:
            events.restart()
            decoder = SSEDecoder()
            try:
                async with await self._http.stream("GET", path, headers=_SSE) as answer:
                    async for chunk in answer:
                        for event, data in decoder.feed(chunk):
                            line = events.take(event, data)
                            if line is not None:
                                cuts = 0
                                yield line
            except DrydockError as error:
                if error.code != "NETWORK_ERROR" or cuts >= MAX_CUTS:
                    raise
            if events.status is None:
                cuts += 1
                if cuts > MAX_CUTS:
                    raise DrydockError("STREAM_ENDED", f"The build log of {self.ref} kept ending before the build did.", 502)
                await asyncio.sleep(0.5)

    def __aiter__(self) -> AsyncIterator[str]:
        return self.logs()

    async def wait(self, *, on_log: Callable[[str], Union[object, Awaitable[object]]] | None = None) -> TemplateVersion:
        async for line in self.logs():
            await _call(on_log, line)
        if self._events.status == "failed":
            raise TemplateBuildError(self.name, self.version, self._events.error or "the build failed")
        template = Template.from_json(await self._http.json("GET", f"/v1/templates/{segment(self.name)}"))
        for version in template.versions:
            if version.version == self.version:
                return version
        raise DrydockError("TEMPLATE_NOT_FOUND", f"Template {self.ref} is gone.", 404)

    def __repr__(self) -> str:
        return f"AsyncTemplateBuild(ref={self.ref!r})"


class AsyncTemplates:
    def __init__(self, http: AsyncTransport) -> None:
        self._http = http

    async def build(self, name: str, dockerfile: str, *, files: Mapping[str, str] | None = None, description: str | None = None) -> AsyncTemplateBuild:
        body = compact({"name": name, "dockerfile": dockerfile, "files": dict(files) if files else None, "description": description})
        queued = await self._http.json("POST", "/v1/templates", body)
        return AsyncTemplateBuild(self._http, queued["name"], int(queued["version"]))

    def build_of(self, name: str, version: int) -> AsyncTemplateBuild:
        return AsyncTemplateBuild(self._http, name, version)

    async def list(self) -> list[TemplateSummary]:
        return [TemplateSummary.from_json(t) for t in (await self._http.json("GET", "/v1/templates"))["templates"]]

    async def get(self, name: str) -> Template:
        return Template.from_json(await self._http.json("GET", f"/v1/templates/{segment(name)}"))

    async def delete(self, name: str) -> None:
        await self._http.request("DELETE", f"/v1/templates/{segment(name)}")
