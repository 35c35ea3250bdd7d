"""A DeepAgents-compatible sandbox backend on a Drydock thread's files and session.

``DrydockBackend`` implements the sandbox backend protocol of DeepAgents' filesystem
(``ls_info``, ``read`` with offset/limit and line numbers, ``write``, ``edit``,
``grep_raw``, ``glob_info``, ``upload_files``, ``download_files``, ``execute`` and
``id``, with ``a``-prefixed async variants) and returns the protocol's result shapes.
It does not import deepagents: the result classes are defined here with the protocol's
field names, so a DeepAgents or LangGraph agent can take the backend as it is::

    from drydock import Drydock
    from drydock.deepagents import DrydockBackend

    backend = DrydockBackend(client=Drydock(), thread_id="chat-42")
    agent = create_deep_agent(backend=backend, ...)   # deepagents

File operations work on the thread's files (the REST API; no sandbox needed); ``execute``
runs a shell command in the thread's session, started on first use. Failures the model
can act on (a missing file, an existing file, an ambiguous edit, a bad pattern) come back
as ``Error: ...`` text or in the results' ``error`` field, as the protocol says; what the
model cannot fix (a bad key, an outage) raises ``DrydockError``.
"""

from __future__ import annotations

import asyncio
import signal as _signal
from dataclasses import dataclass
from typing import Any, Literal, Mapping, Sequence, TypedDict

from .client import Drydock, Session, Sessions
from .errors import DrydockError
from .types import Execution, FileEntry, GrepMode

__all__ = [
    "DrydockBackend",
    "EditResult",
    "ExecuteResponse",
    "FileDownloadResponse",
    "FileInfo",
    "FileOperationError",
    "FileUploadResponse",
    "GrepMatch",
    "WriteResult",
]

FileOperationError = Literal["file_not_found", "permission_denied", "is_directory", "invalid_path"]


class _FileInfoPath(TypedDict):
    path: str


# total=False on a subclass rather than NotRequired[...]: under `from __future__ import
# annotations` Python 3.11 counts NotRequired keys as required at run time.
class FileInfo(_FileInfoPath, total=False):
    """A listing entry: only ``path`` is required; a directory's path ends with ``/``."""

    is_dir: bool
    size: int
    modified_at: str


class GrepMatch(TypedDict):
    path: str
    line: int
    """1-based line number."""
    text: str


@dataclass
class WriteResult:
    """``error`` on failure; ``files_update`` is always None (the files are external)."""

    error: str | None = None
    path: str | None = None
    files_update: dict[str, Any] | None = None


@dataclass
class EditResult:
    error: str | None = None
    path: str | None = None
    files_update: dict[str, Any] | None = None
    occurrences: int | None = None


@dataclass
class ExecuteResponse:
    """A shell command's combined stdout and stderr, its exit code, and whether the
    platform cut the output."""

    output: str
    exit_code: int | None = None
    truncated: bool = False


@dataclass
class FileUploadResponse:
    path: str
    error: FileOperationError | str | None = None


@dataclass
class FileDownloadResponse:
    path: str
    content: bytes | None = None
    error: FileOperationError | str | None = None


# Platform codes that are about the call's own input or the thread's files: the model
# gets them as text. Anything else (auth, outages, a suspended tenant) raises.
_MODEL_FACING = frozenset(
    {
        "FILE_NOT_FOUND",
        "FILE_EXISTS",
        "IS_A_DIRECTORY",
        "INVALID_PATH",
        "NOT_A_TEXT_FILE",
        "STRING_NOT_FOUND",
        "AMBIGUOUS_MATCH",
        "INVALID_PATTERN",
        "SEARCH_TIMEOUT",
        "FILE_TOO_LARGE",
        "QUOTA_EXCEEDED",
        "TOO_MANY_FILES",
        "VALIDATION_FAILED",
    }
)
_FILE_ERRORS: dict[str, FileOperationError] = {
    "FILE_NOT_FOUND": "file_not_found",
    "IS_A_DIRECTORY": "is_directory",
    "INVALID_PATH": "invalid_path",
    "FORBIDDEN": "permission_denied",
}
_MAX_READ_LINES = 10_000
# Exit codes of the shell conventions, for ends without one of the process's own.
_EXIT_TIMEOUT = 124
_EXIT_MEMORY = 137


def _model_facing(error: DrydockError) -> bool:
    return error.code in _MODEL_FACING


def _error_text(error: DrydockError) -> str:
    return f"Error: {error.message}"


class DrydockBackend:
    """A DeepAgents sandbox backend on one Drydock thread.

    Give it a session (``DrydockBackend(session)``), or a client and a thread id
    (``DrydockBackend(client=dd, thread_id="t")``: the session is created when ``execute``
    or ``id`` first needs it, with ``session_options`` as for ``sessions.create``). A
    session that ended (reaped when idle) is replaced by a new one for the thread.

    ``execute_timeout`` is the default time limit of a command in seconds (None: the
    session's). ``grep_regex``: ``grep_raw`` and ``grep_text`` patterns are regular
    expressions (JavaScript syntax, the platform's; an invalid one comes back as an error
    string), as the design note's ``grep`` says; ``grep_regex=False`` searches for the
    literal text, as newer DeepAgents releases describe their grep tool to the model.
    """

    def __init__(
        self,
        session: Session | None = None,
        *,
        client: Drydock | None = None,
        thread_id: str | None = None,
        session_options: Mapping[str, Any] | None = None,
        execute_timeout: float | None = None,
        grep_regex: bool = True,
    ) -> None:
        if session is None and (client is None or not thread_id):
            raise ValueError("DrydockBackend: pass a Session, or client= and thread_id=.")
        if session is not None and thread_id is not None and thread_id != session.thread_id:
            raise ValueError(f"DrydockBackend: the session is thread {session.thread_id!r}, not {thread_id!r}.")
        self._session = session
        self._sessions = client.sessions if client is not None else Sessions(session._http)  # type: ignore[union-attr]
        self.thread_id: str = session.thread_id if session is not None else thread_id  # type: ignore[assignment]
        self.files = client.files(self.thread_id) if client is not None else session.files  # type: ignore[union-attr]
        self._session_options = dict(session_options or {})
        self._execute_timeout = execute_timeout
        self._grep_regex = grep_regex

    # -- the sandbox ------------------------------------------------------------------

    @property
    def session(self) -> Session:
        """The thread's session, created on first use."""
        if self._session is None:
            self._session = self._sessions.create(thread_id=self.thread_id, **self._session_options)
        return self._session

    @property
    def id(self) -> str:
        """The id of the sandbox: the session's."""
        return self.session.id

    def execute(self, command: str, *, timeout: int | float | None = None) -> ExecuteResponse:
        """Runs a shell line in the sandbox (``/bin/bash -c``, in /session, as the sandbox
        user) and returns its combined output and exit code. A process killed by a signal
        exits 128 + its number, one that reached its time limit 124 and one that ran out
        of memory 137, each with a line saying so at the end of the output."""
        limit = timeout if timeout is not None else self._execute_timeout
        timeout_ms = int(limit * 1000) if limit else None
        # stderr joins stdout in the shell itself, so their lines keep their order.
        line = "exec 2>&1\n" + command
        try:
            record = self.session.commands.run(line, timeout_ms=timeout_ms)
        except DrydockError as error:
            if error.code not in ("SESSION_ENDED", "SESSION_NOT_FOUND"):
                raise
            # Reaped or deleted: the thread gets a new session (the command never ran).
            self._session = self._sessions.create(thread_id=self.thread_id, **self._session_options)
            record = self._session.commands.run(line, timeout_ms=timeout_ms)
        return _execute_response(record)

    # -- files --------------------------------------------------------------------------

    def ls_info(self, path: str) -> list[FileInfo]:
        """The direct children of a directory (an empty list when there is none)."""
        try:
            entries = self.files.ls(path or "/")
        except DrydockError as error:
            if _model_facing(error):
                return []
            raise
        return [_file_info(e) for e in entries]

    def read(self, file_path: str, offset: int = 0, limit: int = 2000) -> str:
        """``limit`` lines from the 0-based line ``offset``, numbered ``cat -n`` style (the
        number right-aligned in 6 columns, a tab, the line; lines over 2000 characters go
        on in numbered continuation rows). Errors, an empty file, a binary file or an
        offset past the end come back as a sentence."""
        if limit <= 0:
            return ""
        try:
            return self.files.read(file_path, offset=max(0, offset), limit=min(limit, _MAX_READ_LINES))
        except DrydockError as error:
            if error.code == "FILE_NOT_FOUND":
                return f"Error: File '{file_path}' not found"
            if _model_facing(error):
                return _error_text(error)
            raise

    def write(self, file_path: str, content: str) -> WriteResult:
        """Creates a new file; refuses one that exists (change it with ``edit``)."""
        try:
            if self.files.exists(file_path):
                return WriteResult(
                    error=f"Cannot write to {file_path} because it already exists. Read and then make an edit, or write to a new path."
                )
            info = self.files.write(file_path, content)
        except DrydockError as error:
            if _model_facing(error):
                return WriteResult(error=_error_text(error))
            raise
        return WriteResult(path=info.path, files_update=None)

    def edit(self, file_path: str, old_string: str, new_string: str, replace_all: bool = False) -> EditResult:
        """Replaces ``old_string`` (which must be unique unless ``replace_all``)."""
        try:
            result = self.files.edit(file_path, old_string, new_string, replace_all=replace_all)
        except DrydockError as error:
            if error.code == "FILE_NOT_FOUND":
                return EditResult(error=f"Error: File '{file_path}' not found")
            if _model_facing(error):
                return EditResult(error=_error_text(error))
            raise
        return EditResult(path=result.path, files_update=None, occurrences=result.occurrences)

    def grep_raw(self, pattern: str, path: str | None = None, glob: str | None = None) -> list[GrepMatch] | str:
        """Matching lines (1-based ``line``) of the files under ``path`` whose name matches
        ``glob``; an error string for a pattern the platform refuses."""
        try:
            found = self.files.grep(pattern, path=path or "/", glob=glob or None, output_mode="content", regex=self._grep_regex, max_matches=100_000)
        except DrydockError as error:
            if error.code == "FILE_NOT_FOUND":
                return []
            if _model_facing(error):
                return _error_text(error)
            raise
        return [GrepMatch(path=m.path, line=m.line, text=m.text) for m in found.matches]

    def grep_text(self, pattern: str, path: str | None = None, glob: str | None = None, output_mode: GrepMode = "files_with_matches") -> str:
        """What DeepAgents' ``grep`` tool shows: the paths of matching files
        (``files_with_matches``), ``path:line:text`` lines (``content``) or ``path: count``
        lines (``count``); an error as text. Searched by the platform in that mode."""
        try:
            found = self.files.grep(pattern, path=path or "/", glob=glob or None, output_mode=output_mode, regex=self._grep_regex)
        except DrydockError as error:
            if error.code == "FILE_NOT_FOUND":
                return f"No files found under {path or '/'}"
            if _model_facing(error):
                return _error_text(error)
            raise
        if output_mode == "content":
            lines = [f"{m.path}:{m.line}:{m.text}" for m in found.matches]
        elif output_mode == "count":
            lines = [f"{c.path}: {c.count}" for c in found.counts]
        else:
            lines = list(found.files)
        if found.truncated:
            lines.append(found.note or "[results truncated]")
        return "\n".join(lines) if lines else f"No matches found for pattern '{pattern}'"

    def glob_info(self, pattern: str, path: str = "/") -> list[FileInfo]:
        """Files whose path (relative to ``path``) matches ``pattern``."""
        try:
            paths = self.files.glob(pattern, path or "/")
        except DrydockError as error:
            if _model_facing(error):
                return []
            raise
        return [FileInfo(path=p, is_dir=False) for p in paths]

    def upload_files(self, files: Sequence[tuple[str, bytes]]) -> list[FileUploadResponse]:
        """Writes each ``(path, bytes)`` (replacing files that exist), one answer per file."""
        responses: list[FileUploadResponse] = []
        for path, content in files:
            try:
                self.files.write(path, bytes(content))
                responses.append(FileUploadResponse(path=path))
            except DrydockError as error:
                if not _model_facing(error) and error.code not in _FILE_ERRORS:
                    raise
                responses.append(FileUploadResponse(path=path, error=_FILE_ERRORS.get(error.code, error.message)))
        return responses

    def download_files(self, paths: Sequence[str]) -> list[FileDownloadResponse]:
        """Each file's bytes, or its error (``file_not_found``, ``is_directory``, ...)."""
        responses: list[FileDownloadResponse] = []
        for path in paths:
            try:
                responses.append(FileDownloadResponse(path=path, content=self.files.download(path)))
            except DrydockError as error:
                if not _model_facing(error) and error.code not in _FILE_ERRORS:
                    raise
                responses.append(FileDownloadResponse(path=path, error=_FILE_ERRORS.get(error.code, error.message)))
        return responses

    # -- async variants (as DeepAgents' protocol does by default: in a thread) ----------

    async def aexecute(self, command: str, *, timeout: int | float | None = None) -> ExecuteResponse:
        return await asyncio.to_thread(self.execute, command, timeout=timeout)

    async def als_info(self, path: str) -> list[FileInfo]:
        return await asyncio.to_thread(self.ls_info, path)

    async def aread(self, file_path: str, offset: int = 0, limit: int = 2000) -> str:
        return await asyncio.to_thread(self.read, file_path, offset, limit)

    async def awrite(self, file_path: str, content: str) -> WriteResult:
        return await asyncio.to_thread(self.write, file_path, content)

    async def aedit(self, file_path: str, old_string: str, new_string: str, replace_all: bool = False) -> EditResult:
        return await asyncio.to_thread(self.edit, file_path, old_string, new_string, replace_all)

    async def agrep_raw(self, pattern: str, path: str | None = None, glob: str | None = None) -> list[GrepMatch] | str:
        return await asyncio.to_thread(self.grep_raw, pattern, path, glob)

    async def aglob_info(self, pattern: str, path: str = "/") -> list[FileInfo]:
        return await asyncio.to_thread(self.glob_info, pattern, path)

    async def aupload_files(self, files: Sequence[tuple[str, bytes]]) -> list[FileUploadResponse]:
        return await asyncio.to_thread(self.upload_files, files)

    async def adownload_files(self, paths: Sequence[str]) -> list[FileDownloadResponse]:
        return await asyncio.to_thread(self.download_files, paths)

    def __repr__(self) -> str:
        return f"DrydockBackend(thread_id={self.thread_id!r})"


def _file_info(entry: FileEntry) -> FileInfo:
    if entry.is_dir:
        info = FileInfo(path=entry.path.rstrip("/") + "/", is_dir=True, size=0)
    else:
        info = FileInfo(path=entry.path, is_dir=False, size=entry.size)
    if entry.modified_at:
        info["modified_at"] = entry.modified_at
    return info


def _execute_response(record: Execution) -> ExecuteResponse:
    output = record.stdout + record.stderr
    if record.status == "timeout":
        return ExecuteResponse(_with_note(output, "[Command timed out: it reached its time limit and was killed]"), _EXIT_TIMEOUT, record.truncated)
    if record.status == "memory":
        return ExecuteResponse(_with_note(output, "[Command killed: the sandbox ran out of memory]"), _EXIT_MEMORY, record.truncated)
    if record.exit_code is not None:
        return ExecuteResponse(output, record.exit_code, record.truncated)
    if record.signal:
        try:
            number = int(_signal.Signals[record.signal])
        except KeyError:
            number = int(_signal.SIGKILL)
        return ExecuteResponse(_with_note(output, f"[Command ended by {record.signal}]"), 128 + number, record.truncated)
    reason = record.error.value if record.error else record.status
    return ExecuteResponse(_with_note(output, f"[Command did not run to its end: {reason}]"), 1, record.truncated)


def _with_note(output: str, note: str) -> str:
    if output and not output.endswith("\n"):
        output += "\n"
    return output + note
