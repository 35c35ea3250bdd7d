"""The host side of the supervisor: reading and answering the requests that arrive on
the host channel (exec, fs-delete, fs-read, fs-write, recycle, checkpoint, ping, shutdown), and
writing frames back."""

from __future__ import annotations

import json
import os
import selectors
import time
from typing import Any

from .artifacts import empty_artifacts_report
from .capture import Capture
from .commands import check_command
from .execs import Exec, interrupted_error, is_number
from .file_ops import IncomingFile, delete_session_path, open_session_file, split_session_path
from .framing import (
    DEFAULT_MAX_OUTPUT_BYTES,
    DEFAULT_TIMEOUT_MS,
    MAX_HOST_FRAME,
    READ_CHUNK,
    Exit,
    FrameReader,
    encode_frame,
    log,
)
from .recycle import empty_dir, kill_user_processes, leftovers, remove_sysv_ipc
from .session_tree import ARTIFACTS_NAME, Snapshot, diff_snapshots, empty_change_report, take_snapshot


class HostChannelMixin:
    """Part of Supervisor (event_loop.py): the host channel."""

    def send(self, message: dict[str, Any]) -> None:
        self.write_all(encode_frame(message))

    def write_all(self, payload: bytes) -> None:
        data = memoryview(payload)
        while data:
            try:
                data = data[os.write(self.host_out, data):]
            except BlockingIOError:  # the host's end may be non-blocking
                self._wait_writable(self.host_out)
            except (BrokenPipeError, ConnectionResetError):
                log("host channel closed")
                raise Exit(0) from None

    @staticmethod
    def _wait_writable(fd: int) -> None:
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_WRITE)
            sel.select()

    def on_host_readable(self) -> None:
        try:
            data = os.read(self.host_in, READ_CHUNK)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            log(f"reading the host channel failed: {exc}")
            data = b""
        if not data:
            log("host channel reached EOF; exiting")
            raise Exit(0)
        for frame in self.host_frames.feed(data):
            if frame is FrameReader.OVERSIZE:
                self.protocol_error(f"frame larger than {MAX_HOST_FRAME} bytes; discarded")
                continue
            try:
                message = json.loads(frame.decode("utf-8"))
            except ValueError as exc:  # includes UnicodeDecodeError
                self.protocol_error(f"frame is not UTF-8 JSON: {exc}")
                continue
            if not isinstance(message, dict):
                self.protocol_error("frame is not a JSON object")
                continue
            self.on_host_message(message)

    def protocol_error(self, message: str) -> None:
        log(f"protocol error: {message}")
        self.send({"ev": "protocol_error", "message": message})

    def on_host_message(self, message: dict[str, Any]) -> None:
        op = message.get("op")
        if op == "ping":
            self.send({"ev": "pong", "id": message.get("id")})
        elif op == "exec":
            self.on_exec_request(message)
        elif op == "fs-delete":
            self.on_fs_delete(message)
        elif op == "fs-read":
            self.on_fs_read(message)
        elif op == "fs-write":
            self.on_fs_write(message)
        elif op == "interrupt":
            self.on_interrupt(message)
        elif op == "bg-read":
            self.on_bg_read(message)
        elif op == "bg-unwatch":
            self.on_bg_unwatch(message)
        elif op == "bg-stdin":
            self.on_bg_stdin(message)
        elif op == "bg-signal":
            self.on_bg_signal(message)
        elif op == "pty-open":
            self.on_pty_open(message)
        elif op == "pty-input":
            self.on_pty_input(message)
        elif op == "pty-resize":
            self.on_pty_resize(message)
        elif op == "pty-close":
            self.on_pty_close(message)
        elif op == "recycle":
            self.on_recycle(message)
        elif op == "checkpoint":
            self.on_checkpoint(message)  # checkpoint.py
        elif op == "fs-list":
            self.on_fs_list(message)
        elif op == "shutdown":
            log("shutdown requested")
            raise Exit(0)
        else:
            self.protocol_error(f"unknown op {op!r}")

    def on_interrupt(self, message: dict[str, Any]) -> None:
        """Stops the exec `id` if it is the one in progress; anything else is a no-op
        (the exec may have finished while the request travelled)."""
        exec_id = message.get("id")
        if not isinstance(exec_id, str):
            self.protocol_error("interrupt needs a string id")
            return
        cur = self.current
        if cur is None or cur.id != exec_id or cur.interrupted_at is not None:
            return
        if cur.command is not None:
            self.interrupt_command()
            return
        if cur.started is None:
            # Still waiting for a kernel: the code never runs.
            self.finish_exec("error", None, interrupted_error("the execution was interrupted before its code ran"))
            return
        self.interrupt_exec(cancelled=True)

    def on_exec_request(self, message: dict[str, Any]) -> None:
        exec_id = message.get("id")
        if not isinstance(exec_id, str):
            self.protocol_error("exec needs a string id")
            return
        code = message.get("code")
        command = message.get("command")
        timeout_ms = message.get("timeoutMs", DEFAULT_TIMEOUT_MS)
        cap = message.get("maxOutputBytes", DEFAULT_MAX_OUTPUT_BYTES)
        capture_figures = message.get("captureFigures", True)
        session_unchanged = message.get("sessionUnchanged", False)
        stream = message.get("stream", True)
        problem = None
        if command is not None:
            problem = check_command(command)
        elif not isinstance(code, str):
            problem = "code must be a string"
        elif not is_number(timeout_ms) or timeout_ms <= 0:
            problem = "timeoutMs must be a positive number"
        elif not is_number(cap) or not isinstance(cap, int) or cap < 0:
            problem = "maxOutputBytes must be a non-negative integer"
        elif not isinstance(capture_figures, bool):
            problem = "captureFigures must be a boolean"
        elif not isinstance(session_unchanged, bool):
            problem = "sessionUnchanged must be a boolean"
        elif not isinstance(stream, bool):
            problem = "stream must be a boolean"
        if problem is not None:
            self.send_rejection(exec_id, "InvalidRequest", problem)
            return
        if command is not None and message.get("background") is True:
            self.start_background(exec_id, command)  # beside everything else (background.py)
            return
        if self.current is not None:
            self.send_rejection(exec_id, "Busy", "another exec is still running")
            return
        self.current = Exec(
            id=exec_id,
            code=code if isinstance(code, str) else "",
            command=command,
            timeout_ms=float(timeout_ms),
            cap=cap,
            stdout=Capture(cap, live=stream),
            stderr=Capture(cap, live=stream),
            capture_figures=capture_figures,
            session_unchanged=session_unchanged,
        )
        if command is not None:
            self.start_command()  # a process of its own: the kernel need not be ready
        elif self.kernel is not None and self.kernel.ready:
            self.start_exec()
        # else: it starts when the (re)spawned kernel reports ready.

    def on_fs_delete(self, message: dict[str, Any]) -> None:
        request_id = message.get("id")
        paths = message.get("paths")
        if not isinstance(request_id, str) or not isinstance(paths, list):
            self.protocol_error("fs-delete needs a string id and a list of paths")
            return
        deleted: list[str] = []
        missing: list[str] = []
        refused: list[dict[str, Any]] = []
        if self.current is not None:
            refused = [{"path": p, "reason": "busy"} for p in paths]
        else:
            root_fd: int | None = None
            try:
                root_fd = os.open(self.session_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            except OSError as exc:
                log(f"fs-delete: cannot open the session dir: {exc}")
            for path in paths:
                parts = split_session_path(path)
                if parts is None:
                    refused.append({"path": path, "reason": "invalid"})
                    continue
                outcome = "error" if root_fd is None else delete_session_path(root_fd, parts)
                if outcome == "deleted":
                    deleted.append(path)
                elif outcome == "missing":
                    missing.append(path)
                else:
                    refused.append({"path": path, "reason": outcome})
            if root_fd is not None:
                os.close(root_fd)
            if any(p.split("/")[1:2] != [ARTIFACTS_NAME] for p in deleted):
                self.last_snapshot = None  # the host's deletes are not the code's
        self.send(
            {"ev": "fs-deleted", "id": request_id, "deleted": deleted, "missing": missing, "refused": refused}
        )

    def on_fs_read(self, message: dict[str, Any]) -> None:
        """Sends regular files to the host: per asked path, in order, one `fs-file` frame
        with the file's size followed by exactly that many raw bytes (not a frame) and an
        `fs-file-end` frame, or one `fs-file` frame saying why it was not read. The bytes
        go from the file to the channel with sendfile (no copy through this process);
        the host reads them at its own pace, this loop waits meanwhile."""
        request_id = message.get("id")
        paths = message.get("paths")
        max_bytes = message.get("maxBytes")
        if (
            not isinstance(request_id, str)
            or not isinstance(paths, list)
            or not isinstance(max_bytes, int)
            or isinstance(max_bytes, bool)
            or max_bytes < 0
        ):
            self.protocol_error("fs-read needs a string id, a list of paths and a whole maxBytes")
            return
        root_fd: int | None = None
        try:
            root_fd = os.open(self.session_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as exc:
            log(f"fs-read: cannot open the session dir: {exc}")
        try:
            for path in paths:
                parts = split_session_path(path)
                if parts is None:
                    self.send({"ev": "fs-file", "id": request_id, "path": str(path), "skipped": "invalid-path"})
                    continue
                opened = "unreadable" if root_fd is None else open_session_file(root_fd, parts, max_bytes)
                if isinstance(opened, str):
                    self.send({"ev": "fs-file", "id": request_id, "path": path, "skipped": opened})
                    continue
                fd, size = opened
                try:
                    self.send({"ev": "fs-file", "id": request_id, "path": path, "size": size})
                    complete = self.send_file(fd, size)
                finally:
                    os.close(fd)
                self.send({"ev": "fs-file-end", "id": request_id, "path": path, "complete": complete})
        finally:
            if root_fd is not None:
                os.close(root_fd)

    def on_fs_write(self, message: dict[str, Any]) -> None:
        """Puts files below the session dir: the request lists each file's path, size and
        mtime, and exactly the sum of the sizes in raw bytes follows it on the channel
        (not frames), the files' contents in order. Each file is made under a new name in
        its folder and renamed over its path once whole (file_ops.IncomingFile), every
        folder on the way opened without following a symlink, as the sandbox user: a
        link swapped in by code at any moment is refused, never followed. One
        `fs-written` frame answers once the last byte is in."""
        request_id = message.get("id")
        files = message.get("files")
        specs = files if isinstance(files, list) else []
        sizes = [f.get("size") if isinstance(f, dict) else None for f in specs]
        if (
            not isinstance(request_id, str)
            or not isinstance(files, list)
            or not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in sizes)
        ):
            # Without the sizes the raw bytes after this frame cannot be told from frames.
            log("fs-write needs a string id and files with whole sizes; the channel is out of step")
            raise Exit(1)
        write = _FsWrite(self, request_id, specs, busy=self.current is not None)
        total = sum(sizes)
        if total:
            self.host_frames.expect_raw(total, write.on_bytes)
        write.advance()

    def send_file(self, fd: int, size: int) -> bool:
        """Exactly `size` bytes of fd onto the channel; whether they are the file's bytes.

        A file that shrinks (or fails to read) meanwhile is padded with zeros to the size
        announced, one that grows is cut there: either way the host is told it is not
        complete and discards it.
        """
        sent = 0
        while sent < size:
            try:
                n = os.sendfile(self.host_out, fd, sent, size - sent)
            except BlockingIOError:
                self._wait_writable(self.host_out)
                continue
            except (BrokenPipeError, ConnectionResetError):
                log("host channel closed")
                raise Exit(0) from None
            except OSError as exc:
                log(f"fs-read: reading a file failed: {exc}")
                break
            if n == 0:
                break
            sent += n
        complete = sent == size
        while sent < size:
            pad = min(size - sent, READ_CHUNK)
            self.write_all(bytes(pad))
            sent += pad
        try:
            return complete and os.fstat(fd).st_size == size
        except OSError:
            return False

    def send_rejection(self, exec_id: str, name: str, value: str) -> None:
        """`done` for an exec that never ran; does not consume stateLost."""
        self.send(
            {
                "ev": "done",
                "id": exec_id,
                "status": "error",
                "stdout": "",
                "stderr": "",
                "truncated": False,
                "result": None,
                "error": {"name": name, "value": value, "traceback": ""},
                "stateLost": False,
                "durationMs": 0.0,
                "cpuMs": None,
                "files": empty_change_report(),
                "artifacts": empty_artifacts_report(),
                "figures": [],
            }
        )

    def on_fs_list(self, message: dict[str, Any]) -> None:
        """Every file of the session dir, as a change report from nothing (an exec's
        `files`): what a session forked from a snapshot brings into its new thread."""
        request_id = message.get("id")
        if not isinstance(request_id, str):
            self.protocol_error("fs-list needs a string id")
            return
        empty = Snapshot({}, [], False, 0)
        self.send({"ev": "fs-listed", "id": request_id, "files": diff_snapshots(empty, take_snapshot(self.session_dir))})

    def on_recycle(self, message: dict[str, Any]) -> None:
        """Makes the sandbox as new for the same owner's next one-shot run (recycle.py),
        then checks it; `clean` false tells the host to destroy the sandbox instead."""
        request_id = message.get("id")
        if not isinstance(request_id, str):
            self.protocol_error("recycle needs a string id")
            return
        started = time.perf_counter()
        identity = self.identity
        problems: list[str]
        if not identity.separated:
            problems = ["recycling needs user code and the supervisor under different users"]
        elif self.current is not None:
            problems = ["an exec is running"]
        else:
            assert identity.sandbox_uid is not None
            self.stop_terminals()
            self.stop_background()
            self.stop_kernel()
            problems = [f"process {pid} of the sandbox user survived" for pid in kill_user_processes(identity)]
            dirs = [self.session_dir, *self.scratch_dirs]
            for path in dirs:
                problems += empty_dir(path)
            problems += remove_sysv_ipc(identity.sandbox_uid)
            # A new interpreter; the next exec walks the (empty) session dir afresh and
            # is not told of lost state: the host asked for it.
            self.last_snapshot = None
            self.state_lost = False
            self.spawn_kernel()
            problems += leftovers(identity, dirs, self.kernel.pid if self.kernel else None)
        self.send(
            {
                "ev": "recycled",
                "id": request_id,
                "clean": not problems,
                "problems": problems,
                "durationMs": round((time.perf_counter() - started) * 1000.0, 3),
            }
        )


class _FsWrite:
    """One fs-write whose bytes are arriving: the file being written and what is left of it."""

    def __init__(self, supervisor: HostChannelMixin, request_id: str, specs: list[dict[str, Any]], busy: bool) -> None:
        self.supervisor = supervisor
        self.id = request_id
        self.specs = specs
        self.busy = busy
        self.index = -1
        self.current: IncomingFile | None = None
        self.left = 0
        self.written = 0
        self.refused: list[dict[str, Any]] = []
        self.root_fd: int | None = None
        if not busy:
            try:
                self.root_fd = os.open(supervisor.session_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            except OSError as exc:
                log(f"fs-write: cannot open the session dir: {exc}")

    def on_bytes(self, data: memoryview) -> None:
        while data:
            take = min(self.left, len(data))
            if self.current is not None:
                self.current.write(data[:take])
            self.left -= take
            data = data[take:]
            if not self.left:
                self.advance()

    def advance(self) -> None:
        """Ends the file whose bytes are all in, and starts the next ones (an empty file
        ends at once); after the last, answers."""
        while not self.left:
            if self.index >= 0:
                self._end_file()
            self.index += 1
            if self.index == len(self.specs):
                self._answer()
                return
            self._start_file(self.specs[self.index])

    def _start_file(self, spec: dict[str, Any]) -> None:
        self.left = spec["size"]
        path = spec.get("path")
        mtime_ms = spec.get("mtimeMs")
        parts = split_session_path(path)
        if self.busy:
            why = "busy"
        elif parts is None or not is_number(mtime_ms):
            why = "invalid"
        elif self.root_fd is None:
            why = "error"
        else:
            self.current = IncomingFile(self.root_fd, parts, int(mtime_ms * 1_000_000))
            return
        self.current = None
        self.refused.append({"path": str(path), "reason": why})

    def _end_file(self) -> None:
        incoming, self.current = self.current, None
        if incoming is None:
            return
        refusal = incoming.finish()
        if refusal is None:
            self.written += 1
        else:
            self.refused.append({"path": self.specs[self.index]["path"], "reason": refusal})

    def _answer(self) -> None:
        if self.root_fd is not None:
            os.close(self.root_fd)
            self.root_fd = None
        if self.written:
            self.supervisor.last_snapshot = None  # the host's writes are not the code's
        self.supervisor.send({"ev": "fs-written", "id": self.id, "written": self.written, "refused": self.refused})
