"""What the REPL's tests share: a host (Client) that starts supervisor.py as a
subprocess and speaks the wire protocol to it, and the base test case.

The tests are end to end: run them all with `python3 -m unittest discover -p 'test_*.py'`
from this directory (stdlib only).
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import queue
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
SUPERVISOR = os.path.join(HERE, "supervisor.py")
# For tests that must not run as root (the sandbox never does).
SYSTEM_PYTHON = "/usr/bin/python3"
NOBODY = 65534
# The kernel runs on this same interpreter: figure tests need matplotlib in it.
HAVE_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
EMPTY_ARTIFACTS = {"files": [], "skipped": [], "truncated": False}


class Client:
    """A host: owns one supervisor process and reads its frames on a thread."""

    def __init__(
        self,
        env: dict[str, str] | None = None,
        python: str = sys.executable,
        uid: int | None = None,
        sandbox_uid: int | None = None,
        channel_socket: str | None = None,
    ) -> None:
        self.dir = tempfile.mkdtemp(prefix="drydock-repl-test-")
        self.log = tempfile.TemporaryFile()
        full_env = dict(os.environ, DRYDOCK_SESSION_DIR=self.dir)
        full_env.update(env or {})
        if channel_socket is not None:  # the host channel on a Unix socket (socket_channel.py)
            full_env["DRYDOCK_CHANNEL_SOCKET"] = channel_socket
        as_user: dict[str, Any] = {}
        if uid is not None:  # run as an unprivileged user, like in the container
            os.chown(self.dir, uid, uid)
            as_user = {"user": uid, "group": uid, "extra_groups": []}
        if sandbox_uid is not None:  # started as root, user code runs as this user
            os.chown(self.dir, sandbox_uid, sandbox_uid)
        self.proc = subprocess.Popen(
            [python, "-u", SUPERVISOR],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            cwd=self.dir,
            env=full_env,
            **as_user,
        )
        self.channel_in: Any = self.proc.stdin
        self.channel_out: Any = self.proc.stdout
        self.sock: socket.socket | None = None
        if channel_socket is not None:
            self.sock = connect_when_listening(channel_socket, self.proc)
            self.channel_in = self.sock.makefile("wb")
            self.channel_out = self.sock.makefile("rb")
        self.frames: queue.Queue[tuple[float, dict[str, Any] | None]] = queue.Queue()
        threading.Thread(target=self._reader, daemon=True).start()
        self.ready = self.next_frame()
        self._ids = 0

    def _reader(self) -> None:
        stream = self.channel_out
        assert stream is not None
        while True:
            header = stream.read(4)
            if len(header) < 4:
                self.frames.put((time.monotonic(), None))
                return
            (length,) = struct.unpack(">I", header)
            # json.loads raising here would make every test time out: fail loudly.
            frame = json.loads(stream.read(length).decode("utf-8"))
            if frame.get("ev") == "fs-file" and "size" in frame:
                # The file's raw bytes follow the frame (fs-read); kept beside it here.
                frame["_data"] = stream.read(frame["size"])
            self.frames.put((time.monotonic(), frame))

    def send_raw(self, data: bytes) -> None:
        assert self.channel_in is not None
        self.channel_in.write(data)
        self.channel_in.flush()

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode("utf-8")
        self.send_raw(struct.pack(">I", len(body)) + body)

    def next_frame(self, timeout: float = 15.0) -> dict[str, Any]:
        return self.next_timed_frame(timeout)[1]

    def next_timed_frame(self, timeout: float = 15.0) -> tuple[float, dict[str, Any]]:
        try:
            at, frame = self.frames.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no frame within {timeout} s; log:\n{self.read_log()}") from None
        if frame is None:
            raise AssertionError(f"supervisor closed the channel; log:\n{self.read_log()}")
        return at, frame

    def start(
        self,
        code: str,
        timeout_ms: int = 10_000,
        max_output: int = 1 << 20,
        capture_figures: bool | None = None,
        session_unchanged: bool | None = None,
        stream: bool | None = None,
    ) -> str:
        self._ids += 1
        exec_id = f"e{self._ids}"
        message: dict[str, Any] = {
            "op": "exec", "id": exec_id, "code": code, "timeoutMs": timeout_ms, "maxOutputBytes": max_output
        }
        if capture_figures is not None:
            message["captureFigures"] = capture_figures
        if session_unchanged is not None:
            message["sessionUnchanged"] = session_unchanged
        if stream is not None:
            message["stream"] = stream
        self.send(message)
        return exec_id

    def wait_done(self, exec_id: str) -> tuple[dict[str, Any], list[tuple[float, dict[str, Any]]]]:
        """The `done` for exec_id and every frame (with arrival time) that came before it."""
        seen: list[tuple[float, dict[str, Any]]] = []
        while True:
            at, frame = self.next_timed_frame()
            seen.append((at, frame))
            if frame.get("ev") == "done" and frame.get("id") == exec_id:
                return frame, seen

    def run(self, code: str, **kwargs: Any) -> dict[str, Any]:
        return self.wait_done(self.start(code, **kwargs))[0]

    def start_command(self, argv: list[str], timeout_ms: int = 10_000, max_output: int = 1 << 20, **spec: Any) -> str:
        """An exec with `command` (commands.py): `spec` holds cwd, env, stdin."""
        self._ids += 1
        exec_id = f"c{self._ids}"
        spec.setdefault("cwd", self.dir)
        self.send({
            "op": "exec", "id": exec_id, "command": {"argv": argv, **spec},
            "timeoutMs": timeout_ms, "maxOutputBytes": max_output,
        })
        return exec_id

    def run_command(self, argv: list[str], **kwargs: Any) -> dict[str, Any]:
        return self.wait_done(self.start_command(argv, **kwargs))[0]

    def shell(self, line: str, **kwargs: Any) -> dict[str, Any]:
        return self.run_command(["/bin/bash", "-c", line], **kwargs)

    def read_log(self) -> str:
        self.log.seek(0)
        return self.log.read().decode("utf-8", "replace")

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.send({"op": "shutdown"})
                self.proc.wait(timeout=5)
            except (OSError, ValueError, subprocess.TimeoutExpired):  # ValueError: channel closed
                self.proc.kill()
                self.proc.wait()
        if self.sock is not None:
            # Ends the reader thread's read first: closing its file under it would block.
            with contextlib.suppress(OSError):
                self.sock.shutdown(socket.SHUT_RDWR)
        for stream in (self.proc.stdin, self.proc.stdout, self.channel_in, self.channel_out):
            if stream is not None:
                stream.close()
        if self.sock is not None:
            self.sock.close()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def connect_when_listening(path: str, proc: subprocess.Popen[bytes], timeout_s: float = 15.0) -> socket.socket:
    """Connects to the supervisor's channel socket once it listens, as the worker does."""
    deadline = time.monotonic() + timeout_s
    while True:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(path)
            return sock
        except (FileNotFoundError, ConnectionRefusedError):
            sock.close()
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"the supervisor never listened on {path}") from None
            time.sleep(0.01)


def pid_alive(pid: int) -> bool:
    """True if pid exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rindex(b")") + 2 :].split()[0] not in (b"Z", b"X")


class ReplTestCase(unittest.TestCase):
    env: dict[str, str] | None = None

    def setUp(self) -> None:
        self.repl = Client(self.env)
        self.addCleanup(self.repl.close)

    def assertOk(self, done: dict[str, Any]) -> None:
        self.assertEqual(done["status"], "ok", done)

