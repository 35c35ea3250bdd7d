"""The sync client: ``Drydock(url=..., api_key=...)``.

Safe to share between threads: each thread keeps its own keep-alive connections.
"""

from __future__ import annotations

import os
import threading
import time
from typing import IO, Any, Callable, Iterable, Iterator, Literal, Mapping, Sequence, overload

from . import _bodies
from ._bodies import BatchItemArg, LocalFile, NetworkArg
from ._events import FOLLOW_PAGE, FOLLOW_POLL_S, MAX_CUTS, BatchEvents, ProcessEvents, ResultsFrontier, RunEvents, TemplateLogEvents
from ._http import Body, StreamedAnswer, SyncTransport
from ._wire import LineDecoder, RetryPolicy, SSEDecoder, compact, decode_json, ndjson_chunks, segment, with_query
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
    "Artifacts",
    "BatchRun",
    "Batches",
    "Download",
    "Drydock",
    "Executions",
    "ProcessHandle",
    "Session",
    "SessionCommands",
    "Sessions",
    "Snapshots",
    "TemplateBuild",
    "Templates",
    "ThreadFiles",
]

OutputCallback = Callable[[str], object]
_SSE = {"Accept": "text/event-stream"}


def _follow(answer: StreamedAnswer, reader: RunEvents | ProcessEvents, on_stdout: OutputCallback | None, on_stderr: OutputCallback | None) -> None:
    """Reads a run's or a process's event stream to its end, calling back with output."""
    decoder = SSEDecoder()
    with answer:
        while True:
            chunk = answer.read1()
            events = decoder.feed(chunk) if chunk else decoder.flush()
            for event, data in events:
                taken = reader.take(event, data)
                if taken is not None:
                    callback = on_stdout if taken[0] == "stdout" else on_stderr
                    if callback is not None:
                        callback(taken[1])
            if not chunk:
                return


class Drydock:
    """The Drydock client.

    ``url`` and ``api_key`` default to ``DRYDOCK_URL`` and ``DRYDOCK_API_KEY``.
    ``timeout`` bounds each wait for the platform's bytes in seconds (None: no bound; a
    run waits as long as its code runs); ``retry`` is the policy of what is safe to
    repeat (``RetryPolicy(attempts=1)`` or ``retry=1`` turns retries off).
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
            raise ValueError("Drydock: `url` is required (e.g. http://localhost:8080), or set DRYDOCK_URL.")
        if not api_key:
            raise ValueError("Drydock: `api_key` is required (a tenant key, ddk_...), or set DRYDOCK_API_KEY.")
        policy = RetryPolicy(attempts=retry) if isinstance(retry, int) else (retry or RetryPolicy())
        self._http = SyncTransport(url, api_key, timeout=timeout, connect_timeout=connect_timeout, retry=policy, ssl_context=ssl_context)
        self.url = self._http.base_url
        self.sessions = Sessions(self._http)
        self.artifacts = Artifacts(self._http)
        self.batches = Batches(self._http)
        self.templates = Templates(self._http)
        self.executions = Executions(self._http)
        self.snapshots = Snapshots(self._http)

    def files(self, thread_id: str) -> ThreadFiles:
        """A thread's files, without a session."""
        return ThreadFiles(self._http, thread_id)

    def close(self) -> None:
        """Closes the client's connections (every thread's)."""
        self._http.close()

    def __enter__(self) -> Drydock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Drydock(url={self.url!r})"


# ---------------------------------------------------------------------------------------
# Sessions


class Session:
    """A sandbox with a Python REPL for one thread: variables persist between runs, and
    the files the code writes under /session are the thread's files.

    As a context manager it ends the session on exit (the thread's files stay).
    """

    def __init__(self, http: SyncTransport, info: SessionInfo) -> None:
        self._http = http
        self.info = info
        self._path = _bodies.session_path(info.id)
        self.files = ThreadFiles(http, info.thread_id)
        self.commands = SessionCommands(http, info.id)

    @property
    def id(self) -> str:
        return self.info.id

    @property
    def thread_id(self) -> str:
        return self.info.thread_id

    def run(
        self,
        code: str,
        *,
        timeout_ms: int | None = None,
        idempotency_key: str | None = None,
        on_stdout: OutputCallback | None = None,
        on_stderr: OutputCallback | None = None,
    ) -> Execution:
        """Runs code in the REPL and returns its record whatever its status: a Python
        exception is ``run.error``, not a raise. With ``on_stdout``/``on_stderr`` the run
        is streamed (server-sent events) and they are called as the code prints. With an
        ``idempotency_key`` the request may be retried, and repeating it returns the
        first run instead of running the code again."""
        body = _bodies.run_body(code, timeout_ms, idempotency_key)
        safe = idempotency_key is not None
        if on_stdout is None and on_stderr is None:
            return Execution.from_json(self._http.json("POST", self._path + "/executions", body, retry_safe=safe))
        answer = self._http.stream("POST", self._path + "/executions", json=body, headers=_SSE, retry_safe=safe)
        events = RunEvents("execution")
        _follow(answer, events, on_stdout, on_stderr)
        return events.result()

    def interrupt(self) -> list[str]:
        """Stops what runs in the session, like a notebook's interrupt (the running code
        gets a KeyboardInterrupt, its variables stay; runs waiting behind it never start).
        Returns at once with the ids of the runs it stopped."""
        answer = self._http.json("POST", self._path + "/interrupt")
        return list(answer.get("interrupted") or [])

    def hibernate(self) -> SessionInfo:
        """Checkpoints the session (gvisor tier: its variables, processes and files) and
        removes its container; its next run resumes it (``state_lost`` False,
        ``resumed_ms``). Waits for a running execution to finish first. A runc session is
        ``CHECKPOINT_NOT_AVAILABLE`` (422); an open terminal ``SESSION_BUSY`` (409).
        Returns its state (``status == "hibernated"``, also kept in ``info``)."""
        self.info = SessionInfo.from_json(self._http.json("POST", self._path + "/hibernate", retry_safe=True))
        return self.info

    def snapshot(self, *, ttl_seconds: int | None = None) -> Snapshot:
        """A snapshot between runs (gvisor tier), kept ``ttl_seconds`` (at least 60; at
        most, and by default, the deployment's retention) to fork sessions from with
        ``sessions.fork(snapshot.id)``; the session goes on. ``SNAPSHOT_QUOTA_EXCEEDED``
        (429) past the tenant's quota."""
        body = compact({"ttlSeconds": ttl_seconds})
        return Snapshot.from_json(self._http.json("POST", self._path + "/snapshots", body))

    def refresh(self) -> SessionInfo:
        """The session's current state (also kept in ``info``)."""
        self.info = SessionInfo.from_json(self._http.json("GET", self._path))
        return self.info

    def delete(self) -> None:
        """Ends the session: its container goes, the thread's files stay."""
        self._http.request("DELETE", self._path)

    def network(self, *, verdict: Literal["allowed", "denied"] | None = None, limit: int | None = None, before: str | None = None) -> SessionNetwork:
        """Its network policy (None: no network) and one page of its connection log, newest
        first; pass ``next`` as ``before`` for the following page."""
        query = {"verdict": verdict, "limit": limit, "before": before}
        return SessionNetwork.from_json(self._http.json("GET", with_query(self._path + "/network", query)))

    def connections(self, *, verdict: Literal["allowed", "denied"] | None = None, page_size: int | None = None) -> Iterator[Connection]:
        """Every connection of its log, newest first, a page asked only when reached."""
        before: str | None = None
        while True:
            page = self.network(verdict=verdict, limit=page_size, before=before)
            yield from page.connections
            if page.next is None or not page.connections or page.next == before:
                return
            before = page.next

    def narrow_network(self, allow: Sequence[str]) -> SessionInfo:
        """Narrows its policy to ``allow`` (each entry must already be allowed: widening is
        ``NETWORK_NOT_ALLOWED``); returns the updated state (also in ``info``)."""
        self.info = SessionInfo.from_json(self._http.json("PATCH", self._path + "/network", {"allow": list(allow)}))
        return self.info

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.delete()
        except DrydockError as error:
            if error.code not in ("SESSION_NOT_FOUND", "SESSION_ENDED"):
                raise

    def __repr__(self) -> str:
        return f"Session(id={self.id!r}, thread_id={self.thread_id!r}, status={self.info.status!r})"


class Sessions:
    def __init__(self, http: SyncTransport) -> None:
        self._http = http

    def create(
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
    ) -> Session:
        """Starts a session, or returns the thread's live one (as it is, whatever the
        options say). ``network={"allow": [...]}`` lets its code reach those hosts within
        the tenant's ceiling; ``template`` is ``"name"`` or ``"name:version"``.

        ``tier="gvisor"`` runs it under gVisor, which can hibernate and be snapshotted
        (``TIER_NOT_AVAILABLE`` where the deployment does not offer it,
        ``TIER_NOT_ALLOWED`` outside the tenant's tiers); ``idle_action`` is what it comes
        to when idle; ``from_snapshot`` is a fork (see ``fork``)."""
        body = _bodies.session_body(thread_id, limits, storage, datasets, template, network, tier, idle_action, from_snapshot)
        return Session(self._http, SessionInfo.from_json(self._http.json("POST", "/v1/sessions", body)))

    def get(self, session_id: str) -> Session:
        return Session(self._http, SessionInfo.from_json(self._http.json("GET", _bodies.session_path(session_id))))

    def fork(self, snapshot_id: str, *, thread_id: str | None = None) -> Session:
        """A new session from a snapshot: its variables, processes and files, with the
        settings of the session it was taken of, on ``thread_id`` (one without a live
        session: else ``THREAD_HAS_SESSION``, 409) or a new thread. Its restored /session
        becomes that thread's files. ``SNAPSHOT_NOT_FOUND`` (404) for an expired, deleted
        or unknown snapshot."""
        body = _bodies.fork_body(snapshot_id, thread_id)
        return Session(self._http, SessionInfo.from_json(self._http.json("POST", "/v1/sessions", body)))

    def list(self, *, include_ended: bool = False) -> list[Session]:
        path = with_query("/v1/sessions", {"includeEnded": True} if include_ended else None)
        return [Session(self._http, SessionInfo.from_json(s)) for s in self._http.json("GET", path)["sessions"]]


class Snapshots:
    """The tenant's snapshots: taken with ``session.snapshot()``, forked with
    ``sessions.fork(id)``."""

    def __init__(self, http: SyncTransport) -> None:
        self._http = http

    def list(self) -> list[Snapshot]:
        """Newest first; expired ones are gone."""
        return [Snapshot.from_json(x) for x in self._http.json("GET", "/v1/snapshots")["snapshots"]]

    def get(self, snapshot_id: str) -> Snapshot:
        return Snapshot.from_json(self._http.json("GET", _bodies.snapshot_path(snapshot_id)))

    def delete(self, snapshot_id: str) -> None:
        """Deletes it; the sessions forked from it go on."""
        self._http.request("DELETE", _bodies.snapshot_path(snapshot_id))


class Executions:
    """Runs and commands by id (e.g. to stop one from another thread)."""

    def __init__(self, http: SyncTransport) -> None:
        self._http = http

    def get(self, execution_id: str) -> Execution:
        return Execution.from_json(self._http.json("GET", f"/v1/executions/{segment(execution_id)}"))

    def interrupt(self, execution_id: str) -> ExecutionInterrupt:
        """Stops it if it runs (KeyboardInterrupt) or waits; ``requested`` False if it had ended."""
        return ExecutionInterrupt.from_json(self._http.json("POST", f"/v1/executions/{segment(execution_id)}/interrupt"))


# ---------------------------------------------------------------------------------------
# Commands and background processes


class SessionCommands:
    """Processes in the session's sandbox beside the REPL (whose variables they never
    touch), as the sandbox user, seeing the thread's files in /session."""

    def __init__(self, http: SyncTransport, session_id: str) -> None:
        self._http = http
        self.session_id = session_id
        self._path = _bodies.session_path(session_id)

    @overload
    def run(
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
    ) -> ProcessHandle: ...

    @overload
    def run(
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

    def run(
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
    ) -> CommandResult | ProcessHandle:
        """Runs a shell line (a string, for ``/bin/bash -c``) or a program and its
        arguments (a sequence, no shell) and returns its record whatever it did: a non-zero
        exit is ``status == "error"`` with ``exit_code``, not a raise.

        ``background=True`` returns a ProcessHandle as soon as the process started; the
        callbacks then get its output from the start until it exits (``handle.wait()``).
        """
        body = _bodies.command_body(cmd, cwd, env, stdin, None if background else timeout_ms, idempotency_key, background)
        safe = idempotency_key is not None
        if background:
            started = self._http.json("POST", self._path + "/commands", body, retry_safe=safe)
            if started.get("status") != "running":
                error = started.get("error") or {}
                raise DrydockError("PROCESS_NOT_STARTED", str(error.get("value") or f"the process ended {started.get('status')}"), 200)
            handle = ProcessHandle(self._http, self.session_id, started["id"], started.get("pid"))
            if on_stdout is not None or on_stderr is not None:
                handle._follow_in_background(on_stdout, on_stderr)
            return handle
        if on_stdout is None and on_stderr is None:
            return Execution.from_json(self._http.json("POST", self._path + "/commands", body, retry_safe=safe))
        answer = self._http.stream("POST", self._path + "/commands", json=body, headers=_SSE, retry_safe=safe)
        events = RunEvents("command")
        _follow(answer, events, on_stdout, on_stderr)
        return events.result()

    def list(self) -> list[ProcessInfo]:
        """The session's background processes, newest first."""
        return [ProcessInfo.from_json(p) for p in self._http.json("GET", self._path + "/processes")["processes"]]

    def process(self, process_id: str, pid: int | None = None) -> ProcessHandle:
        """A handle on a background process started earlier."""
        return ProcessHandle(self._http, self.session_id, process_id, pid)


class ProcessHandle:
    """A background process: it runs until it exits, is signalled, or its session ends."""

    def __init__(self, http: SyncTransport, session_id: str, process_id: str, pid: int | None) -> None:
        self._http = http
        self.session_id = session_id
        self.id = process_id
        self.pid = pid
        self._path = f"{_bodies.session_path(session_id)}/processes/{segment(process_id)}"
        self._thread: threading.Thread | None = None
        self._outcome: ProcessExit | BaseException | None = None

    def output(self, *, on_stdout: OutputCallback | None = None, on_stderr: OutputCallback | None = None) -> ProcessExit:
        """Its output from its start (what the sandbox kept: the newest 1 MiB), then live,
        until it exits; returns how it ended."""
        answer = self._http.stream("GET", self._path + "/output", headers=_SSE)
        events = ProcessEvents(self.id)
        _follow(answer, events, on_stdout, on_stderr)
        return events.result()

    def wait(self) -> ProcessExit:
        """Waits until it exits (following its output to the callbacks given to run())."""
        if self._thread is None:
            return self.output()
        self._thread.join()
        outcome = self._outcome
        if isinstance(outcome, BaseException):
            raise outcome
        assert outcome is not None
        return outcome

    def _follow_in_background(self, on_stdout: OutputCallback | None, on_stderr: OutputCallback | None) -> None:
        def follow() -> None:
            try:
                self._outcome = self.output(on_stdout=on_stdout, on_stderr=on_stderr)
            except BaseException as error:  # handed to wait()
                self._outcome = error

        self._thread = threading.Thread(target=follow, name=f"drydock-process-{self.id}", daemon=True)
        self._thread.start()

    def info(self) -> ProcessInfo:
        return ProcessInfo.from_json(self._http.json("GET", self._path))

    def send_stdin(self, data: str | bytes, *, eof: bool = False) -> None:
        """Writes to its standard input (a string as UTF-8); ``eof`` closes it after."""
        payload = data.encode("utf-8") if isinstance(data, str) else bytes(data)
        path = with_query(self._path + "/stdin", {"eof": True} if eof else None)
        self._http.request("POST", path, body=payload, headers={"Content-Type": "application/octet-stream"}, retry_safe=False)

    def close_stdin(self) -> None:
        self.send_stdin(b"", eof=True)

    def kill(self, signal: ProcessSignal = "SIGKILL") -> bool:
        """Sends a signal to it and its group; whether it was delivered."""
        return bool(self._http.json("POST", self._path + "/signal", {"signal": signal}).get("delivered"))

    def __repr__(self) -> str:
        return f"ProcessHandle(id={self.id!r}, pid={self.pid!r})"


# ---------------------------------------------------------------------------------------
# Files and artifacts


class Download:
    """A streamed download: iterate for chunks, or ``read()`` the rest. Close it (or use
    it as a context manager) when you stop early."""

    def __init__(self, answer: StreamedAnswer) -> None:
        self._answer = answer
        self.content_type: str | None = answer.headers.get("content-type")
        length = answer.headers.get("content-length")
        self.size: int | None = int(length) if length and length.isdigit() else None
        self.etag: str | None = answer.headers.get("etag")

    def __iter__(self) -> Iterator[bytes]:
        return iter(self._answer)

    def read(self) -> bytes:
        return b"".join(self._answer)

    def save(self, dest: LocalFile | IO[bytes]) -> int:
        """Writes the rest into a file object, or a local file (replaced once complete)."""
        if hasattr(dest, "write"):
            written = 0
            for chunk in self._answer:
                dest.write(chunk)
                written += len(chunk)
            return written
        target = os.fspath(dest)
        partial = f"{target}.part"
        try:
            with open(partial, "wb") as out:
                written = self.save(out)
            os.replace(partial, target)
            return written
        except BaseException:
            try:
                os.unlink(partial)
            except OSError:
                pass
            raise

    def close(self) -> None:
        self._answer.close()

    def __enter__(self) -> Download:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ThreadFiles:
    """A thread's files: the same files its sandbox sees under /session."""

    def __init__(self, http: SyncTransport, thread_id: str) -> None:
        self._http = http
        self.thread_id = thread_id
        self._path = _bodies.thread_files_path(thread_id)

    def ls(self, path: str = "/") -> list[FileEntry]:
        """The direct children of a directory."""
        return [FileEntry.from_json(e) for e in self._http.json("GET", with_query(self._path, {"path": path}))["entries"]]

    def stat(self, path: str) -> FileInfo | FileEntry:
        """A file's info, or a directory's entry."""
        d = self._http.json("GET", with_query(self._path + "/stat", {"path": path}))
        return FileInfo.from_json(d) if "sha256" in d else FileEntry.from_json(d)

    def exists(self, path: str) -> bool:
        try:
            self.stat(path)
            return True
        except DrydockError as error:
            if error.code == "FILE_NOT_FOUND":
                return False
            raise

    def read(self, path: str, *, offset: int | None = None, limit: int | None = None) -> str:
        """A text file as numbered lines (``cat -n`` style), ``limit`` lines from the
        0-based line ``offset`` (default 500)."""
        query = {"path": path, "offset": offset, "limit": limit}
        return str(self._http.json("GET", with_query(self._path + "/read", query))["content"])

    def read_text(self, path: str, encoding: str = "utf-8") -> str:
        return self.download(path).decode(encoding)

    def download(self, path: str) -> bytes:
        """The file's bytes (held in memory; ``stream``/``download_to`` for large files)."""
        return self._http.request("GET", with_query(self._path + "/content", {"path": path})).body

    def stream(self, path: str) -> Download:
        """The file's bytes as they arrive."""
        return Download(self._http.stream("GET", with_query(self._path + "/content", {"path": path})))

    def download_to(self, path: str, dest: LocalFile | IO[bytes]) -> int:
        """Streams the file into ``dest`` (a local path or a binary file); returns its size."""
        with self.stream(path) as download:
            return download.save(dest)

    def write(self, path: str, data: str | bytes | bytearray | memoryview | IO[bytes] | Iterable[bytes], content_type: str | None = None) -> FileInfo:
        """Writes a file (creating its directories; replacing it if it exists). A string is
        stored as UTF-8 text; a binary file object or an iterable of bytes is streamed."""
        body: Body
        if isinstance(data, (str, bytes, bytearray, memoryview)):
            body, default_type = _bodies.text_or_bytes(data)
        else:
            body, default_type = data, "application/octet-stream"
        answer = self._http.request(
            "PUT",
            with_query(self._path + "/content", {"path": path}),
            body=body,
            headers={"Content-Type": content_type or default_type},
        )
        return FileInfo.from_json(answer.json())

    def upload(self, path: str, source: LocalFile | bytes | IO[bytes] | Iterable[bytes], content_type: str | None = None) -> FileInfo:
        """Uploads a local file (a path), or bytes, a binary file object or an iterable of
        bytes, streamed. Without ``content_type`` the platform takes it from the name."""
        if isinstance(source, (str, os.PathLike)):
            with _bodies.open_local(source) as handle:
                return self.write(path, handle, content_type)
        return self.write(path, source, content_type)

    def upload_archive(self, archive: LocalFile | bytes | IO[bytes] | Iterable[bytes], *, path: str | None = None, gzip: bool = False) -> ArchiveUpload:
        """Many files in one request: a tar archive (``gzip=True``: a .tar.gz) whose
        regular files are written under ``path`` (default /), all or none."""
        headers = {"Content-Type": "application/gzip" if gzip else "application/x-tar"}
        target = with_query(self._path + "/archive", {"path": path})
        if isinstance(archive, (str, os.PathLike)):
            with _bodies.open_local(archive) as handle:
                return ArchiveUpload.from_json(self._http.request("POST", target, body=handle, headers=headers, retry_safe=True).json())
        # Writing the same archive again gives the same files: safe to repeat.
        return ArchiveUpload.from_json(self._http.request("POST", target, body=archive, headers=headers, retry_safe=True).json())

    def edit(self, path: str, old_string: str, new_string: str, *, replace_all: bool = False) -> EditResult:
        """Replaces an exact string (``STRING_NOT_FOUND``; ``AMBIGUOUS_MATCH`` unless
        ``replace_all``)."""
        body = {"path": path, "oldString": old_string, "newString": new_string, "replaceAll": replace_all}
        return EditResult.from_json(self._http.json("POST", self._path + "/edit", body))

    def glob(self, pattern: str, path: str | None = None) -> list[str]:
        """Paths matching ``*``, ``**``, ``?``, ``[...]``, ``{a,b}``."""
        return list(self._http.json("POST", self._path + "/glob", compact({"pattern": pattern, "path": path}))["paths"])

    def grep(
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
        """Searches text files line by line: literal unless ``regex=True``."""
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
        return GrepResult.from_json(self._http.json("POST", self._path + "/grep", body))

    def delete(self, path: str) -> None:
        """Deletes a file, or a directory and everything under it."""
        self._http.request("DELETE", with_query(self._path, {"path": path}))


class Artifacts:
    """Files the code left under /session/artifacts/: plots, CSVs, reports."""

    def __init__(self, http: SyncTransport) -> None:
        self._http = http

    def list(self, *, thread_id: str | None = None, batch_id: str | None = None, limit: int | None = None) -> list[Artifact]:
        """Newest first (``limit`` 1-1000, default 100)."""
        query = {"threadId": thread_id, "batchId": batch_id, "limit": limit}
        return [Artifact.from_json(a) for a in self._http.json("GET", with_query("/v1/artifacts", query))["artifacts"]]

    def get(self, artifact_id: str) -> Artifact:
        return Artifact.from_json(self._http.json("GET", f"/v1/artifacts/{segment(artifact_id)}"))

    def download(self, artifact_id: str) -> bytes:
        return self._http.request("GET", f"/v1/artifacts/{segment(artifact_id)}/content").body

    def stream(self, artifact_id: str) -> Download:
        return Download(self._http.stream("GET", f"/v1/artifacts/{segment(artifact_id)}/content"))

    def download_to(self, artifact_id: str, dest: LocalFile | IO[bytes]) -> int:
        with self.stream(artifact_id) as download:
            return download.save(dest)

    def signed_url(self, artifact_id: str, *, ttl_seconds: int | None = None) -> SignedUrl:
        """An absolute link that downloads it without a key until it expires."""
        body = compact({"ttlSeconds": ttl_seconds})
        d = self._http.json("POST", f"/v1/artifacts/{segment(artifact_id)}/url", body, retry_safe=True)
        return SignedUrl(_bodies.absolute_url(self._http.base_url, d["url"]), d["expiresAt"])

    def delete(self, artifact_id: str) -> None:
        self._http.request("DELETE", f"/v1/artifacts/{segment(artifact_id)}")


# ---------------------------------------------------------------------------------------
# Batches


ProgressCallback = Callable[[Batch], object]
ItemCallback = Callable[[BatchItemEvent], object]


class BatchRun:
    """One batch: many independent runs, each in a clean sandbox."""

    def __init__(self, http: SyncTransport, info: Batch) -> None:
        self._http = http
        self.info = info
        self._path = f"/v1/batches/{segment(info.id)}"

    @property
    def id(self) -> str:
        return self.info.id

    def refresh(self) -> Batch:
        self.info = Batch.from_json(self._http.json("GET", self._path))
        return self.info

    def wait(self, *, on_progress: ProgressCallback | None = None, on_item: ItemCallback | None = None) -> Batch:
        """Follows the batch's events until it is done (``completed`` or ``cancelled``)
        and returns its final state; a stream cut before the end is followed again."""
        while True:
            batch = self._follow(on_progress, on_item) or self.refresh()
            if batch.done:
                self.info = batch
                return batch
            time.sleep(0.5)

    def _follow(self, on_progress: ProgressCallback | None, on_item: ItemCallback | None) -> Batch | None:
        events = BatchEvents()
        decoder = SSEDecoder()
        try:
            answer = self._http.stream("GET", self._path + "/events", headers=_SSE)
        except DrydockError as error:
            if error.code == "NETWORK_ERROR":
                return None
            raise
        with answer:
            try:
                for chunk in answer:
                    for event, data in decoder.feed(chunk):
                        taken = events.take(event, data)
                        if taken is None:
                            continue
                        if taken[0] == "progress":
                            if on_progress is not None:
                                on_progress(taken[1])  # type: ignore[arg-type]
                        elif on_item is not None:
                            on_item(taken[1])  # type: ignore[arg-type]
            except DrydockError as error:
                if error.code != "NETWORK_ERROR":
                    raise
        return events.done

    def results(self, *, follow: bool = False) -> Iterator[BatchItem]:
        """Every finished item in index order, streamed (never all in memory).

        ``follow=True`` also waits for the items still queued or running and yields each
        as it finishes (about index order, each once), until every item has ended."""
        if follow:
            yield from self._follow_results()
            return
        lines = LineDecoder()
        with self._http.stream("GET", self._path + "/results", headers={"Accept": "application/x-ndjson"}) as answer:
            for chunk in answer:
                for line in lines.feed(chunk):
                    if line.strip():
                        yield BatchItem.from_json(decode_json(line, 200, answer.request_id))
            for line in lines.flush():
                yield BatchItem.from_json(decode_json(line, 200, answer.request_id))

    def _follow_results(self) -> Iterator[BatchItem]:
        frontier = ResultsFrontier()
        while True:
            total = self.refresh().total
            fresh = frontier.take(self.items(offset=frontier.frontier, limit=FOLLOW_PAGE))
            yield from fresh
            if frontier.complete(total):
                return
            if not fresh:
                time.sleep(FOLLOW_POLL_S)

    def items(self, *, status: str | None = None, offset: int | None = None, limit: int | None = None) -> list[BatchItem]:
        """One page of items in index order (``limit`` default 100, at most 1000)."""
        query = {"status": status, "offset": offset, "limit": limit}
        return [BatchItem.from_json(i) for i in self._http.json("GET", with_query(self._path + "/items", query))["items"]]

    def cancel(self, *, kill: bool = False) -> Batch:
        """Queued items become cancelled; running ones finish, or are killed with ``kill``."""
        self.info = Batch.from_json(self._http.json("POST", self._path + "/cancel", {"kill": kill}, retry_safe=True))
        return self.info

    def __repr__(self) -> str:
        return f"BatchRun(id={self.id!r}, status={self.info.status!r}, total={self.info.total})"


class Batches:
    def __init__(self, http: SyncTransport) -> None:
        self._http = http

    def submit(
        self,
        items: Iterable[BatchItemArg],
        *,
        limits: SessionLimits | Mapping[str, Any] | None = None,
        timeout_ms: int | None = None,
        concurrency: int | None = None,
        idempotency_key: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        template: str | None = None,
        network: NetworkArg = None,
        on_sent: Callable[[int], object] | None = None,
        on_progress: ProgressCallback | None = None,
        on_item: ItemCallback | None = None,
    ) -> BatchRun:
        """Submits items from any iterable (a generator is read as it is sent: constant
        memory), streamed as NDJSON with chunked transfer encoding. An item is
        ``{"code", "files"?, "id"?}`` or a string of code.

        ``on_sent(n)`` is called as items go out. With ``on_progress`` or ``on_item`` it
        returns once the batch is done (following its events); otherwise once queued.
        """
        options = _bodies.batch_options(limits, timeout_ms, concurrency, idempotency_key, metadata, template, network)
        body = ndjson_chunks(options, _bodies.batch_items(items), on_sent)
        answer = self._http.request("POST", "/v1/batches", body=body, headers={"Content-Type": "application/x-ndjson"}, retry_safe=False)
        run = BatchRun(self._http, Batch.from_json(answer.json()))
        if on_progress is not None or on_item is not None:
            run.wait(on_progress=on_progress, on_item=on_item)
        return run

    def get(self, batch_id: str) -> BatchRun:
        return BatchRun(self._http, Batch.from_json(self._http.json("GET", f"/v1/batches/{segment(batch_id)}")))

    def list(self, *, limit: int | None = None, before: str | None = None) -> BatchPage:
        """One page, newest first (50 by default, at most 500); pass ``next`` as ``before``."""
        d = self._http.json("GET", with_query("/v1/batches", {"limit": limit, "before": before}))
        return BatchPage([Batch.from_json(b) for b in d["batches"]], d.get("next"))

    def all(self, *, page_size: int | None = None) -> Iterator[Batch]:
        """Every batch, newest first, a page asked only when reached."""
        before: str | None = None
        while True:
            page = self.list(limit=page_size, before=before)
            yield from page.batches
            if page.next is None or not page.batches or page.next == before:
                return
            before = page.next


# ---------------------------------------------------------------------------------------
# Templates


class TemplateBuild:
    """One version of a template being built (or built): its log and its outcome.
    Iterating it is ``logs()``."""

    def __init__(self, http: SyncTransport, name: str, version: int) -> None:
        self._http = http
        self.name = name
        self.version = version
        self._events = TemplateLogEvents()

    @property
    def ref(self) -> str:
        """``"name:version"``, as ``sessions.create(template=...)`` takes it."""
        return f"{self.name}:{self.version}"

    def logs(self) -> Iterator[str]:
        """Every line of the build log from the first, as the worker produces them, until
        the build ends. A stream cut before the end is followed again, skipping the lines
        already seen."""
        events = self._events
        cuts = 0
        path = f"/v1/templates/{segment(self.name)}/versions/{self.version}/logs"
        while events.status is None:
            events.restart()
            decoder = SSEDecoder()
            try:
                with self._http.stream("GET", path, headers=_SSE) as answer:
                    for chunk in answer:
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
                time.sleep(0.5)

    def __iter__(self) -> Iterator[str]:
        return self.logs()

    def wait(self, *, on_log: Callable[[str], object] | None = None) -> TemplateVersion:
        """Follows the build to its end and returns the version once ``ready``; raises
        TemplateBuildError (code ``TEMPLATE_BUILD_FAILED``) when it failed."""
        for line in self.logs():
            if on_log is not None:
                on_log(line)
        if self._events.status == "failed":
            raise TemplateBuildError(self.name, self.version, self._events.error or "the build failed")
        template = Template.from_json(self._http.json("GET", f"/v1/templates/{segment(self.name)}"))
        for version in template.versions:
            if version.version == self.version:
                return version
        raise DrydockError("TEMPLATE_NOT_FOUND", f"Template {self.ref} is gone.", 404)

    def __repr__(self) -> str:
        return f"TemplateBuild(ref={self.ref!r})"


class Templates:
    """Sandbox images built from a Dockerfile that starts ``FROM drydock``."""

    def __init__(self, http: SyncTransport) -> None:
        self._http = http

    def build(self, name: str, dockerfile: str, *, files: Mapping[str, str] | None = None, description: str | None = None) -> TemplateBuild:
        """Queues a build (a new version of ``name``) and returns its handle at once."""
        body = compact({"name": name, "dockerfile": dockerfile, "files": dict(files) if files else None, "description": description})
        queued = self._http.json("POST", "/v1/templates", body)
        return TemplateBuild(self._http, queued["name"], int(queued["version"]))

    def build_of(self, name: str, version: int) -> TemplateBuild:
        """A handle on a version built earlier, or building."""
        return TemplateBuild(self._http, name, version)

    def list(self) -> list[TemplateSummary]:
        """The tenant's own, then the shared ones."""
        return [TemplateSummary.from_json(t) for t in self._http.json("GET", "/v1/templates")["templates"]]

    def get(self, name: str) -> Template:
        return Template.from_json(self._http.json("GET", f"/v1/templates/{segment(name)}"))

    def delete(self, name: str) -> None:
        self._http.request("DELETE", f"/v1/templates/{segment(name)}")

