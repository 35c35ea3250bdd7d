"""Terminals: an interactive shell on a pseudo-terminal, beside the REPL, commands and
background processes (`terminals` in `features`).

The supervisor opens the pty pair and has the spawner start the shell (bash, a login
shell) as the sandbox user, the leader of a new session whose controlling terminal is
the slave; the supervisor keeps only the master. Bytes typed on the host side are
written to the master; what the terminal shows is read from it and sent as it comes.
Resizing sets the window size, and the kernel sends SIGWINCH to the foreground job.

Requests:
  {"op": "pty-open", "id", "cols", "rows", "cwd"?, "env"?}  -> pty-opened | pty-refused
  {"op": "pty-input", "id", "data64"}
  {"op": "pty-resize", "id", "cols", "rows"}
  {"op": "pty-close", "id", "force"?}  (SIGHUP to its session, as a terminal hanging
                                       up; with force, SIGKILL to every process of it)
Events:
  {"ev": "pty-output", "id", "data64"}
  {"ev": "pty-exit", "id", "exitCode", "signal"}
"""

from __future__ import annotations

import base64
import binascii
import fcntl
import os
import selectors
import signal
import struct
import subprocess
import termios
from dataclasses import dataclass, field
from typing import Any

from .commands import command_env, kill_session, signal_name

MAX_TERMINALS = 4
READ_BYTES = 65536
# Typed input waiting for a shell that does not read it.
MAX_INPUT_QUEUED = 1 << 20
SHELL = ["/bin/bash", "-l"]


@dataclass
class Terminal:
    id: str
    pid: int
    master: int
    popen: subprocess.Popen[bytes] | None
    pidfd: int | None
    pending: bytearray = field(default_factory=bytearray)
    closed: bool = False  # the master reached EOF (every slave closed)


def window_size(cols: Any, rows: Any) -> tuple[int, int] | None:
    if not all(isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 1000 for v in (cols, rows)):
        return None
    return cols, rows


def set_window(fd: int, cols: int, rows: int) -> None:
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))


class TerminalMixin:
    """Part of Supervisor (event_loop.py): self.terminals, by id."""

    def on_pty_open(self, message: dict[str, Any]) -> None:
        term_id = message.get("id")
        size = window_size(message.get("cols", 80), message.get("rows", 24))
        cwd = message.get("cwd", self.session_dir)
        env = message.get("env", {})
        if not isinstance(term_id, str) or size is None or not isinstance(cwd, str) or not isinstance(env, dict):
            self.send({"ev": "pty-refused", "id": term_id, "reason": "invalid", "message": "pty-open needs a string id, and cols and rows from 1 to 1000"})
            return
        if term_id in self.terminals:
            self.send({"ev": "pty-refused", "id": term_id, "reason": "exists", "message": f"terminal {term_id} is open already"})
            return
        if len(self.terminals) >= MAX_TERMINALS:
            self.send({"ev": "pty-refused", "id": term_id, "reason": "limit", "message": f"{MAX_TERMINALS} terminals are open in this session already"})
            return
        master, slave = os.openpty()
        set_window(master, *size)
        full_env = command_env(self.session_dir, cwd, {k: v for k, v in env.items() if isinstance(k, str) and isinstance(v, str)})
        full_env.setdefault("TERM", "xterm-256color")
        spawned = self.spawner.spawn(SHELL, cwd, full_env, (slave,), op="spawn-pty")
        self.watch_spawner()
        popen: subprocess.Popen[bytes] | None = None
        try:
            if isinstance(spawned, OSError):
                raise spawned
            if spawned is None:
                popen = subprocess.Popen(
                    SHELL,
                    stdin=slave,
                    stdout=slave,
                    stderr=slave,
                    cwd=cwd,
                    env=full_env,
                    start_new_session=True,
                    user=self.identity.sandbox_uid,
                    group=self.identity.sandbox_gid,
                    close_fds=True,
                    preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0),
                )
                spawned = popen.pid
        except OSError as exc:
            os.close(master)
            os.close(slave)
            self.send({"ev": "pty-refused", "id": term_id, "reason": "spawn", "message": f"{exc.filename or SHELL[0]}: {exc.strerror}"})
            return
        os.close(slave)
        os.set_blocking(master, False)
        pidfd: int | None = None
        if popen is not None:
            try:
                pidfd = os.pidfd_open(spawned)
            except OSError:
                pidfd = None
        term = Terminal(id=term_id, pid=spawned, master=master, popen=popen, pidfd=pidfd)
        self.terminals[term_id] = term
        self.selector.register(master, selectors.EVENT_READ, ("pty-master", None, term_id))
        if pidfd is not None:
            self.selector.register(pidfd, selectors.EVENT_READ, ("pty-pidfd", None, term_id))
        self.send({"ev": "pty-opened", "id": term_id, "pid": spawned})
        if popen is None and spawned in self.spawner.exits:
            self.terminal_exited(term)

    def dispatch_terminal_event(self, kind: str, term_id: str, mask: int) -> None:
        term = self.terminals.get(term_id)
        if term is None:
            return
        if kind == "pty-pidfd":
            self.terminal_exited(term)
            return
        if mask & selectors.EVENT_WRITE:
            self.flush_terminal(term)
        if mask & selectors.EVENT_READ:
            self.read_terminal(term)

    def read_terminal(self, term: Terminal) -> None:
        try:
            data = os.read(term.master, READ_BYTES)
        except BlockingIOError:
            return
        except OSError:
            data = b""  # EIO: every slave is closed (the shell is ending)
        if data:
            self.send({"ev": "pty-output", "id": term.id, "data64": base64.b64encode(data).decode("ascii")})
            return
        term.closed = True
        self.unregister_master(term)
        # Its exit comes from the spawner (or its pidfd); a shell that left a process
        # holding no slave is ended now.
        if term.popen is None and term.pid in self.spawner.exits:
            self.terminal_exited(term)

    def on_pty_input(self, message: dict[str, Any]) -> None:
        term = self.terminals.get(str(message.get("id")))
        if term is None or term.closed:
            return
        try:
            data = base64.b64decode(str(message.get("data64") or ""), validate=True)
        except (binascii.Error, ValueError):
            self.protocol_error("pty-input needs base64 data64")
            return
        if len(term.pending) + len(data) > MAX_INPUT_QUEUED:
            return  # a shell that reads nothing: typed bytes are dropped, as a full tty would
        term.pending += data
        self.flush_terminal(term)

    def flush_terminal(self, term: Terminal) -> None:
        try:
            while term.pending:
                written = os.write(term.master, term.pending)
                del term.pending[:written]
        except BlockingIOError:
            pass
        except OSError:
            term.pending.clear()
        if not term.closed:
            events = selectors.EVENT_READ | (selectors.EVENT_WRITE if term.pending else 0)
            self.selector.modify(term.master, events, ("pty-master", None, term.id))

    def on_pty_resize(self, message: dict[str, Any]) -> None:
        term = self.terminals.get(str(message.get("id")))
        size = window_size(message.get("cols"), message.get("rows"))
        if term is None or term.closed or size is None:
            return
        try:
            set_window(term.master, *size)
        except OSError:
            pass

    def on_pty_close(self, message: dict[str, Any]) -> None:
        term = self.terminals.get(str(message.get("id")))
        if term is None:
            return
        if message.get("force") is True:
            kill_session(term.pid)
            return
        try:
            os.killpg(term.pid, signal.SIGHUP)
        except (ProcessLookupError, PermissionError):
            pass

    def terminal_exited(self, term: Terminal) -> None:
        if self.terminals.pop(term.id, None) is None:
            return
        if not term.closed:
            for _ in range(16):  # what it showed last
                try:
                    data = os.read(term.master, READ_BYTES)
                except OSError:
                    break
                if not data:
                    break
                self.send({"ev": "pty-output", "id": term.id, "data64": base64.b64encode(data).decode("ascii")})
            self.unregister_master(term)
        kill_session(term.pid)
        rc = self.wait_exit(term.pid, term.popen)
        self.release_pidfd(term.pidfd)
        os.close(term.master)
        self.send({
            "ev": "pty-exit",
            "id": term.id,
            "exitCode": rc if rc is not None and rc >= 0 else None,
            "signal": signal_name(-rc) if rc is not None and rc < 0 else None,
        })

    def unregister_master(self, term: Terminal) -> None:
        try:
            self.selector.unregister(term.master)
        except (KeyError, ValueError):
            pass

    def check_terminal_exits(self) -> None:
        """Terminals whose shell the spawner reported gone."""
        for term in list(self.terminals.values()):
            if term.popen is None and term.pid in self.spawner.exits:
                self.terminal_exited(term)

    def stop_terminals(self) -> None:
        for term in list(self.terminals.values()):
            kill_session(term.pid)
            self.unregister_master(term)
            self.release_pidfd(term.pidfd)
            os.close(term.master)
        self.terminals.clear()
