"""The zygote: a Python process started once per sandbox (`kernel.py --zygote`) that
forks every kernel after the first, so a new kernel costs a fork (about a millisecond)
instead of an interpreter start (20 ms and more of CPU: what recycling a sandbox for
each batch item paid).

It never runs user code, so what a kernel inherits from it is a clean interpreter (and
the modules named in DRYDOCK_ZYGOTE_PRELOAD, already imported). It runs with the
supervisor's ids (privileges.py): user code can neither signal nor trace it, and it can
make each child the plain sandbox user. It is not dumpable. Should it die anyway, kernels
are started the old way (subprocess) after MAX_RESTARTS new zygotes.

Channel (a SOCK_SEQPACKET socketpair, one JSON message per packet):
  supervisor -> zygote  {"op": "fork", "cwd": str} with the kernel's command-read,
                        result-write, stdout-write and stderr-write fds attached
  zygote -> supervisor  {"ev": "forked", "pid": int}
                        {"ev": "exit", "pid": int, "code": int}  (as Popen.returncode)
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from typing import Any

from .framing import log
from .interpreters import user_python

MAX_RESTARTS = 3
START_TIMEOUT_S = 30.0
PACKET = 4096


class Zygote:
    def __init__(self, kernel_path: str, session_dir: str, env: dict[str, str]) -> None:
        self.kernel_path = kernel_path
        self.session_dir = session_dir
        self.env = env
        self.sock: socket.socket | None = None
        self.proc: subprocess.Popen[bytes] | None = None
        self.exits: dict[int, int] = {}
        self.restarts = 0

    @property
    def fd(self) -> int | None:
        return self.sock.fileno() if self.sock is not None else None

    def start(self) -> bool:
        """Starts a zygote (once ready, it answers "ready"); False when it cannot."""
        if self.restarts > MAX_RESTARTS:
            return False
        self.restarts += 1
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self.proc = subprocess.Popen(
                [user_python(self.env), self.kernel_path, "--zygote", str(theirs.fileno())],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=None,  # the container log
                pass_fds=(theirs.fileno(),),
                cwd=self.session_dir,
                env=self.env,
                start_new_session=True,
            )
        except OSError as exc:
            log(f"cannot start the zygote: {exc}")
            ours.close()
            theirs.close()
            return False
        theirs.close()
        ours.settimeout(START_TIMEOUT_S)
        try:
            hello = json.loads(ours.recv(PACKET) or b"null")
        except (OSError, ValueError):
            hello = None
        if isinstance(hello, dict) and hello.get("ev") == "unavailable":
            # Not a crash: this runtime cannot give it the two ids (gVisor); never retried.
            log(f"no zygote here ({hello.get('reason')}); kernels start as processes of their own")
            self.restarts = MAX_RESTARTS + 1
            ours.close()
            self.stop()
            return False
        if not isinstance(hello, dict) or hello.get("ev") != "ready":
            log("the zygote did not start; kernels start as processes of their own")
            ours.close()
            self.stop()
            return False
        ours.setblocking(False)
        self.sock = ours
        return True

    def fork(self, fds: tuple[int, int, int, int], cwd: str) -> int | None:
        """A new kernel with these fds as its command, result, stdout and stderr."""
        if self.sock is None:
            return None
        try:
            self.sock.setblocking(True)
            self.sock.settimeout(START_TIMEOUT_S)
            socket.send_fds(self.sock, [json.dumps({"op": "fork", "cwd": cwd}).encode()], list(fds))
            while True:
                message = self._receive()
                if message is None:
                    return None
                if message.get("ev") == "forked" and isinstance(message.get("pid"), int):
                    return int(message["pid"])
        except OSError as exc:
            log(f"the zygote failed to fork a kernel: {exc}")
            self.lost()
            return None
        finally:
            if self.sock is not None:
                self.sock.setblocking(False)

    def on_readable(self) -> None:
        """Collects exit statuses the zygote sent (called by the event loop)."""
        while self.sock is not None:
            try:
                message = self._receive()
            except BlockingIOError:
                return
            except OSError:
                self.lost()
                return
            if message is None:
                return

    def exit_code(self, pid: int) -> int | None:
        return self.exits.get(pid)

    def wait(self, pid: int, timeout: float) -> int | None:
        """The kernel's exit code, waiting up to `timeout` for the zygote to report it."""
        deadline = time.monotonic() + timeout
        while pid not in self.exits and self.sock is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            try:
                self.sock.settimeout(left)
                self._receive()
            except (TimeoutError, BlockingIOError):
                break
            except OSError:
                self.lost()
            finally:
                if self.sock is not None:
                    self.sock.setblocking(False)
        return self.exits.get(pid)

    def _receive(self) -> dict[str, Any] | None:
        assert self.sock is not None
        data = self.sock.recv(PACKET)
        if not data:
            self.lost()
            return None
        try:
            message = json.loads(data)
        except ValueError:
            return {}
        if isinstance(message, dict) and message.get("ev") == "exit":
            self.exits[int(message["pid"])] = int(message["code"])
        return message if isinstance(message, dict) else {}

    def lost(self) -> None:
        if self.sock is not None:
            log("the zygote is gone")
            self.sock.close()
            self.sock = None
        self.stop()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, 9)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        self.proc = None


class ForkedKernel:
    """A kernel forked by the zygote, with the part of Popen's interface the supervisor
    uses (the zygote, its parent, reaps it and reports its exit code)."""

    def __init__(self, pid: int, zygote: Zygote) -> None:
        self.pid = pid
        self.zygote = zygote

    @property
    def returncode(self) -> int | None:
        return self.zygote.exit_code(self.pid)

    def poll(self) -> int | None:
        self.zygote.on_readable()
        return self.zygote.exit_code(self.pid)

    def wait(self, timeout: float | None = None) -> int:
        code = self.zygote.wait(self.pid, 5.0 if timeout is None else timeout)
        if code is None:
            raise subprocess.TimeoutExpired(["kernel"], timeout or 0)
        return code
