"""Background processes: commands started with `"background": true`, which run beside
everything else until they exit, are signalled, or the sandbox ends.

Started like a command (commands.py: the sandbox user, a session of its own, through
the spawner), answered at once with `bg-started`. Their output is read all the time
into a bounded buffer per process (the newest MAX_KEPT_BYTES, each chunk numbered), never
into an exec's; the host reads what is kept with `bg-read` and, while it watches, gets
each new chunk as `bg-chunk`. Their stdin stays open for `bg-stdin` until closed. Their
exit is always sent (`bg-exit`, with the output's tail), and everything left in their
session is killed then.

Requests:
  {"op": "exec", "id", "command": {...}, "background": true}  -> bg-started | bg-refused
  {"op": "bg-read", "id", "process", "after": seq, "watch": bool}  -> bg-output
  {"op": "bg-unwatch", "process"}
  {"op": "bg-stdin", "id", "process", "data64": base64, "eof": bool}  -> bg-stdin-done
  {"op": "bg-signal", "id", "process", "signal": "SIGTERM"}  -> bg-signalled
"""

from __future__ import annotations

import base64
import binascii
import codecs
import os
import selectors
import signal
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from .commands import CommandProc, kill_session, pid_exists, signal_name
from .framing import READ_CHUNK

MAX_RUNNING = 16
# Exited processes whose output can still be read, oldest forgotten first.
MAX_EXITED = 32
MAX_KEPT_BYTES = 1 << 20
# What bg-stdin may queue for a process that does not read its input.
MAX_STDIN_QUEUED = 4 << 20
SIGNALS = {"SIGINT": signal.SIGINT, "SIGTERM": signal.SIGTERM, "SIGKILL": signal.SIGKILL, "SIGHUP": signal.SIGHUP}


@dataclass
class BgProc:
    id: str
    proc: CommandProc
    started: float
    chunks: deque[tuple[int, str, str]] = field(default_factory=deque)  # (seq, name, text)
    kept_bytes: int = 0
    seq: int = 0
    watched: bool = False
    stdin_queue: bytearray = field(default_factory=bytearray)
    stdin_eof: bool = False
    exit: dict[str, Any] | None = None
    decoders: dict[str, Any] = field(
        default_factory=lambda: {name: codecs.getincrementaldecoder("utf-8")(errors="replace") for name in ("stdout", "stderr")}
    )

    @property
    def first_seq(self) -> int:
        return self.chunks[0][0] if self.chunks else self.seq + 1


class BackgroundMixin:
    """Part of Supervisor (event_loop.py): self.background, by process id."""

    def start_background(self, exec_id: str, spec: dict[str, Any]) -> None:
        running = sum(1 for p in self.background.values() if p.exit is None)
        if exec_id in self.background:
            self.send({"ev": "bg-refused", "id": exec_id, "reason": "exists", "message": f"process {exec_id} exists already"})
            return
        if running >= MAX_RUNNING:
            self.send({"ev": "bg-refused", "id": exec_id, "reason": "limit", "message": f"{MAX_RUNNING} background processes are running in this session already"})
            return
        proc = self.spawn_process(spec, stdin_pipe=True)
        if isinstance(proc, OSError):
            what = spec.get("cwd") if proc.filename == spec.get("cwd") else spec["argv"][0]
            self.send({"ev": "bg-refused", "id": exec_id, "reason": "spawn", "message": f"{what}: {proc.strerror}"})
            return
        bg = BgProc(id=exec_id, proc=proc, started=time.monotonic())
        stdin = spec.get("stdin")
        if isinstance(stdin, str) and stdin:
            bg.stdin_queue += stdin.encode("utf-8")
        self.background[exec_id] = bg
        self.selector.register(proc.stdout_fd, selectors.EVENT_READ, ("bg-stdout", None, exec_id))
        self.selector.register(proc.stderr_fd, selectors.EVENT_READ, ("bg-stderr", None, exec_id))
        if proc.pidfd is not None:
            self.selector.register(proc.pidfd, selectors.EVENT_READ, ("bg-pidfd", None, exec_id))
        self.send({"ev": "bg-started", "id": exec_id, "pid": proc.pid})
        self.flush_bg_stdin(bg)
        if proc.popen is None and proc.pid in self.spawner.exits:
            self.bg_exited(bg)

    def dispatch_background_event(self, kind: str, process_id: str) -> None:
        bg = self.background.get(process_id)
        if bg is None or bg.exit is not None:
            return
        if kind == "bg-stdout":
            self.read_bg_pipe(bg, "stdout")
        elif kind == "bg-stderr":
            self.read_bg_pipe(bg, "stderr")
        elif kind == "bg-stdin":
            self.flush_bg_stdin(bg)
        elif kind == "bg-pidfd":
            self.bg_exited(bg)

    def read_bg_pipe(self, bg: BgProc, name: str) -> None:
        fd = bg.proc.stdout_fd if name == "stdout" else bg.proc.stderr_fd
        if fd < 0:
            return
        try:
            data = os.read(fd, READ_CHUNK)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data:
            self.keep_bg_output(bg, name, data)
        else:
            self.close_command_fd(bg.proc, name)

    def keep_bg_output(self, bg: BgProc, name: str, data: bytes, final: bool = False) -> None:
        text = bg.decoders[name].decode(data, final=final)
        if not text:
            return
        bg.seq += 1
        bg.chunks.append((bg.seq, name, text))
        bg.kept_bytes += len(text)
        while bg.kept_bytes > MAX_KEPT_BYTES and len(bg.chunks) > 1:
            bg.kept_bytes -= len(bg.chunks.popleft()[2])
        if bg.watched:
            self.send({"ev": "bg-chunk", "process": bg.id, "seq": bg.seq, "name": name, "text": text})

    def flush_bg_stdin(self, bg: BgProc) -> None:
        proc = bg.proc
        if proc.stdin_fd < 0:
            bg.stdin_queue.clear()
            return
        try:
            while bg.stdin_queue:
                written = os.write(proc.stdin_fd, bg.stdin_queue)
                del bg.stdin_queue[:written]
        except BlockingIOError:
            pass
        except OSError:
            bg.stdin_queue.clear()  # it closed its stdin or exited: the rest is not wanted
            bg.stdin_eof = True
        registered = proc.stdin_fd in self.selector.get_map()
        if bg.stdin_queue and not registered:
            self.selector.register(proc.stdin_fd, selectors.EVENT_WRITE, ("bg-stdin", None, bg.id))
        elif not bg.stdin_queue and registered:
            self.selector.unregister(proc.stdin_fd)
        if not bg.stdin_queue and bg.stdin_eof:
            self.close_command_fd(proc, "stdin")

    def bg_exited(self, bg: BgProc) -> None:
        proc = bg.proc
        kill_session(proc.pid)
        rc = self.wait_exit(proc.pid, proc.popen)
        for name in ("stdout", "stderr"):
            fd = proc.stdout_fd if name == "stdout" else proc.stderr_fd
            for _ in range(64):
                if fd < 0:
                    break
                try:
                    data = os.read(fd, READ_CHUNK)
                except OSError:
                    break
                if not data:
                    break
                self.keep_bg_output(bg, name, data)
            self.keep_bg_output(bg, name, b"", final=True)
            self.close_command_fd(proc, name)
        bg.stdin_queue.clear()
        self.close_command_fd(proc, "stdin")
        self.release_pidfd(proc.pidfd)
        proc.pidfd = None
        bg.exit = {
            "exitCode": rc if rc is not None and rc >= 0 else None,
            "signal": signal_name(-rc) if rc is not None and rc < 0 else None,
        }
        stdout, stderr, truncated = self.bg_tails(bg)
        self.send(
            {
                "ev": "bg-exit",
                "process": bg.id,
                **bg.exit,
                "durationMs": round((time.monotonic() - bg.started) * 1000.0, 3),
                "stdout": stdout,
                "stderr": stderr,
                "truncated": truncated,
            }
        )
        bg.watched = False
        exited = [p for p in self.background.values() if p.exit is not None]
        for old in exited[: max(0, len(exited) - MAX_EXITED)]:
            del self.background[old.id]

    @staticmethod
    def bg_tails(bg: BgProc) -> tuple[str, str, bool]:
        """What is kept of each stream, and whether output was dropped from the start."""
        out = "".join(text for _, name, text in bg.chunks if name == "stdout")
        err = "".join(text for _, name, text in bg.chunks if name == "stderr")
        return out, err, bg.first_seq > 1

    def check_background_exits(self) -> None:
        """Processes started by the spawner end when it reports their exit; one that
        went while the spawner was gone is noticed by polling."""
        for bg in list(self.background.values()):
            if bg.exit is not None or bg.proc.pidfd is not None:
                continue
            proc = bg.proc
            if proc.popen is not None:
                gone = proc.popen.poll() is not None
            else:
                gone = proc.pid in self.spawner.exits or (self.spawner.fd is None and not pid_exists(proc.pid))
            if gone:
                self.bg_exited(bg)

    def background_polling(self) -> bool:
        return any(
            bg.exit is None and bg.proc.pidfd is None and (bg.proc.popen is not None or self.spawner.fd is None)
            for bg in self.background.values()
        )

    # ------------------------------------------------------------------ requests

    def on_bg_read(self, message: dict[str, Any]) -> None:
        request_id, bg = message.get("id"), self.background.get(str(message.get("process")))
        after = message.get("after", 0)
        if not isinstance(after, int):
            after = 0
        if bg is None:
            self.send({"ev": "bg-output", "id": request_id, "process": message.get("process"), "known": False, "chunks": [], "first": 0, "exit": None})
            return
        chunks = [[seq, name, text] for seq, name, text in bg.chunks if seq > after]
        if message.get("watch") is True and bg.exit is None:
            bg.watched = True
        self.send({"ev": "bg-output", "id": request_id, "process": bg.id, "known": True, "chunks": chunks, "first": bg.first_seq, "exit": bg.exit})

    def on_bg_unwatch(self, message: dict[str, Any]) -> None:
        bg = self.background.get(str(message.get("process")))
        if bg is not None:
            bg.watched = False

    def on_bg_stdin(self, message: dict[str, Any]) -> None:
        request_id, bg = message.get("id"), self.background.get(str(message.get("process")))
        answer: dict[str, Any] = {"ev": "bg-stdin-done", "id": request_id, "process": message.get("process"), "accepted": 0, "refused": None}
        try:
            data = base64.b64decode(str(message.get("data64") or ""), validate=True)
        except (binascii.Error, ValueError):
            self.send({**answer, "refused": "invalid"})
            return
        if bg is None:
            answer["refused"] = "unknown"
        elif bg.exit is not None:
            answer["refused"] = "exited"
        elif bg.stdin_eof or bg.proc.stdin_fd < 0:
            answer["refused"] = "closed"
        elif len(bg.stdin_queue) + len(data) > MAX_STDIN_QUEUED:
            answer["refused"] = "full"
        else:
            bg.stdin_queue += data
            bg.stdin_eof = message.get("eof") is True
            answer["accepted"] = len(data)
            self.flush_bg_stdin(bg)
        self.send(answer)

    def on_bg_signal(self, message: dict[str, Any]) -> None:
        request_id, bg = message.get("id"), self.background.get(str(message.get("process")))
        number = SIGNALS.get(str(message.get("signal")))
        delivered = False
        if bg is not None and bg.exit is None and number is not None:
            try:
                os.killpg(bg.proc.pid, number)  # its group: what it started too, as ^C would
                delivered = True
            except (ProcessLookupError, PermissionError):
                delivered = False
        self.send({"ev": "bg-signalled", "id": request_id, "process": message.get("process"), "delivered": delivered})

    def stop_background(self) -> None:
        """Every background process killed and forgotten (the supervisor exits, or the
        sandbox is recycled)."""
        for bg in self.background.values():
            if bg.exit is None:
                kill_session(bg.proc.pid)
            for name in ("stdout", "stderr", "stdin"):
                self.close_command_fd(bg.proc, name)
            self.release_pidfd(bg.proc.pidfd)
            bg.proc.pidfd = None
        self.background.clear()

