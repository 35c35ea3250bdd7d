"""End-to-end tests: start supervisor.py as a subprocess and speak the wire protocol.

Run with: python3 -m unittest -v test_repl   (from this directory; stdlib only)
"""

from __future__ import annotations

import base64
import importlib.util
import json
import os
import queue
import shutil
import struct
import subprocess
import sys
import tempfile
import textwrap
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
    ) -> None:
        self.dir = tempfile.mkdtemp(prefix="drydock-repl-test-")
        self.log = tempfile.TemporaryFile()
        full_env = dict(os.environ, DRYDOCK_SESSION_DIR=self.dir)
        full_env.update(env or {})
        as_user: dict[str, Any] = {}
        if uid is not None:  # run as an unprivileged user, like in the container
            os.chown(self.dir, uid, uid)
            as_user = {"user": uid, "group": uid, "extra_groups": []}
        self.proc = subprocess.Popen(
            [python, "-u", SUPERVISOR],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            cwd=self.dir,
            env=full_env,
            **as_user,
        )
        self.frames: queue.Queue[tuple[float, dict[str, Any] | None]] = queue.Queue()
        threading.Thread(target=self._reader, daemon=True).start()
        self.ready = self.next_frame()
        self._ids = 0

    def _reader(self) -> None:
        stream = self.proc.stdout
        assert stream is not None
        while True:
            header = stream.read(4)
            if len(header) < 4:
                self.frames.put((time.monotonic(), None))
                return
            (length,) = struct.unpack(">I", header)
            # json.loads raising here would make every test time out: fail loudly.
            self.frames.put((time.monotonic(), json.loads(stream.read(length).decode("utf-8"))))

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

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

    def read_log(self) -> str:
        self.log.seek(0)
        return self.log.read().decode("utf-8", "replace")

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.send({"op": "shutdown"})
                self.proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                stream.close()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


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


class TestBasics(ReplTestCase):
    def test_ready_frame(self) -> None:
        ready = self.repl.ready
        self.assertEqual(ready["ev"], "ready")
        self.assertEqual(ready["protocol"], 1)
        self.assertEqual(ready["python"], "%d.%d.%d" % sys.version_info[:3])
        self.assertEqual(ready["pid"], self.repl.proc.pid)

    def test_done_frame_shape(self) -> None:
        done = self.repl.run("1")
        self.assertEqual(
            set(done),
            {
                "ev", "id", "status", "stdout", "stderr", "truncated", "result", "error",
                "stateLost", "durationMs", "files", "artifacts", "figures", "trackingMs",
            },
        )
        self.assertIsInstance(done["durationMs"], float)
        self.assertFalse(done["stateLost"])  # first exec of a fresh supervisor
        self.assertEqual((done["artifacts"], done["figures"]), (EMPTY_ARTIFACTS, []))

    def test_persistence(self) -> None:
        self.assertOk(self.repl.run("x = 41"))
        done = self.repl.run("x + 1")
        self.assertOk(done)
        self.assertEqual(done["result"]["text"], "42")
        self.assertOk(self.repl.run("import math\ndef area(r):\n    return math.pi * r * r"))
        done = self.repl.run("round(area(2), 3)")
        self.assertEqual(done["result"]["text"], "12.566")
        self.assertFalse(done["stateLost"])

    def test_namespace_is_main(self) -> None:
        done = self.repl.run("__name__, '__builtins__' in globals(), __import__('os').getcwd()")
        self.assertEqual(done["result"]["text"], repr(("__main__", True, os.path.realpath(self.repl.dir))))

    def test_stdout_stderr_separation(self) -> None:
        done = self.repl.run("import sys\nprint('out')\nprint('err', file=sys.stderr)\nprint('out2')")
        self.assertOk(done)
        self.assertEqual(done["stdout"], "out\nout2\n")
        self.assertEqual(done["stderr"], "err\n")
        self.assertFalse(done["truncated"])

    def test_result_null_without_value(self) -> None:
        self.assertIsNone(self.repl.run("None")["result"])
        self.assertIsNone(self.repl.run("print('x')")["result"])
        self.assertIsNone(self.repl.run("y = 3")["result"])
        self.assertEqual(self.repl.run("y = 3\ny * 2")["result"], {"text": "6", "html": None})

    def test_result_html(self) -> None:
        code = textwrap.dedent(
            """
            class Table:
                def __repr__(self): return 'Table()'
                def _repr_html_(self): return '<table></table>'
            Table()
            """
        )
        self.assertEqual(self.repl.run(code)["result"], {"text": "Table()", "html": "<table></table>"})
        # A class object has an unbound _repr_html_: no html, no error.
        self.assertEqual(self.repl.run("Table")["result"]["html"], None)

    def test_exception_traceback(self) -> None:
        done = self.repl.run("def f():\n    return 1 / 0\n\nf()")
        self.assertEqual(done["status"], "error")
        error = done["error"]
        self.assertEqual(error["name"], "ZeroDivisionError")
        self.assertEqual(error["value"], "division by zero")
        tb = error["traceback"]
        self.assertIn("return 1 / 0", tb)
        self.assertIn('File "<cell-', tb)
        self.assertNotIn("kernel.py", tb)
        self.assertNotIn("supervisor.py", tb)
        self.assertTrue(tb.rstrip().endswith("ZeroDivisionError: division by zero"))
        # A function from an earlier cell still shows its own source line.
        done = self.repl.run("f()")
        self.assertIn("return 1 / 0", done["error"]["traceback"])

    def test_syntax_error(self) -> None:
        done = self.repl.run("def broken(:\n    pass")
        self.assertEqual(done["status"], "error")
        self.assertEqual(done["error"]["name"], "SyntaxError")
        self.assertIn("def broken(:", done["error"]["traceback"])
        self.assertNotIn("kernel.py", done["error"]["traceback"])
        self.assertOk(self.repl.run("1"))

    def test_memory_error_is_plain_error(self) -> None:
        done = self.repl.run("raise MemoryError('too big')")
        self.assertEqual((done["status"], done["error"]["name"]), ("error", "MemoryError"))

    def test_sys_exit_is_error(self) -> None:
        self.assertOk(self.repl.run("kept = 1"))
        for code in ("import sys; sys.exit()", "raise SystemExit(3)", "exit()"):
            done = self.repl.run(code)
            self.assertEqual(done["status"], "error", code)
            self.assertEqual(done["error"]["name"], "SystemExit")
        done = self.repl.run("kept")
        self.assertEqual(done["result"]["text"], "1")
        self.assertFalse(done["stateLost"])

    def test_subprocess_output_captured(self) -> None:
        done = self.repl.run(
            "import subprocess\n"
            "subprocess.run(['echo', 'hi'])\n"
            "subprocess.run('echo err >&2', shell=True)\n"
            "None"
        )
        self.assertOk(done)
        self.assertEqual(done["stdout"], "hi\n")
        self.assertEqual(done["stderr"], "err\n")

    def test_unicode_output(self) -> None:
        done = self.repl.run("print('héllo ✓ 🐍')\n'ünï'")
        self.assertEqual(done["stdout"], "héllo ✓ 🐍\n")
        self.assertEqual(done["result"]["text"], "'ünï'")
        done = self.repl.run("import sys; sys.stdout.buffer.write(b'bad \\xff byte\\n')")
        self.assertEqual(done["stdout"], "bad \ufffd byte\n")


class TestIsolation(ReplTestCase):
    def test_frame_forgery_is_just_output(self) -> None:
        code = (
            "import sys, struct\n"
            "sys.stdout.buffer.write(struct.pack('>I', 13) + b'{\"ev\":\"done\"}')\n"
            "print(struct.pack('>I', 20) + b'{\"ev\":\"done\"}')\n"
            "None"
        )
        done, frames = self.repl.wait_done(self.repl.start(code))
        self.assertOk(done)
        self.assertTrue(done["stdout"].startswith('\x00\x00\x00\r{"ev":"done"}'), done["stdout"])
        self.assertIn("{\"ev\":\"done\"}'", done["stdout"])
        for _, frame in frames:
            self.assertIn(frame["ev"], ("stream", "done"))
            self.assertEqual(frame["id"], done["id"])
        self.assertEqual(self.repl.run("2 + 2")["result"]["text"], "4")

    def test_stdin_is_eof(self) -> None:
        done = self.repl.run("import sys, os\n(sys.stdin.read(), os.read(0, 10))")
        self.assertEqual(done["result"]["text"], "('', b'')")
        done = self.repl.run("input('prompt? ')")
        self.assertEqual(done["error"]["name"], "EOFError")

    def test_closing_stdout_fds_is_repaired(self) -> None:
        self.assertEqual(self.repl.run("import os\nos.close(1)\nos.close(2)")["status"], "ok")
        done = self.repl.run("import sys\nprint('back')\nprint('err back', file=sys.stderr)")
        self.assertEqual((done["stdout"], done["stderr"]), ("back\n", "err back\n"))
        self.assertFalse(done["stateLost"])
        self.repl.run("import sys\nsys.stdout.close()\nsys.stderr.close()")
        done = self.repl.run("print('again')\nimport subprocess\nsubprocess.run(['echo', 'child'])\nNone")
        self.assertEqual(done["stdout"], "again\nchild\n")
        self.repl.run("import sys, io\nsys.stdout = io.StringIO()")
        self.assertEqual(self.repl.run("print('restored')")["stdout"], "restored\n")

    def test_private_fds_not_inherited(self) -> None:
        # A child process sees only fd 0/1/2 (ls of its own fd dir adds one for itself).
        done = self.repl.run(
            "import subprocess\n"
            "subprocess.run(['ls', '/proc/self/fd'], capture_output=True, close_fds=False, text=True).stdout.split()"
        )
        self.assertEqual(sorted(eval(done["result"]["text"]))[:3], ["0", "1", "2"])
        self.assertLessEqual(len(eval(done["result"]["text"])), 4)

    def test_supervisor_unreachable_through_proc(self) -> None:
        # Same uid as the supervisor, the kernel could otherwise open
        # /proc/<supervisor>/fd/<channel> and write frames to the host directly.
        repl = self.repl
        if os.geteuid() == 0:  # root may read anything: test as an unprivileged user
            if not os.access(SYSTEM_PYTHON, os.X_OK):
                self.skipTest(f"running as root and {SYSTEM_PYTHON} is missing")
            repl = Client(python=SYSTEM_PYTHON, uid=NOBODY)
            self.addCleanup(repl.close)
            self.assertNotEqual(repl.run("import os\nos.geteuid()")["result"]["text"], "0")
        supervisor = repl.ready["pid"]
        attempts = {
            "list": f"os.listdir('/proc/{supervisor}/fd')",
            "open": f"os.open('/proc/{supervisor}/fd/1', os.O_WRONLY)",
            "environ": f"open('/proc/{supervisor}/environ').read()",
        }
        for what, expr in attempts.items():
            done = repl.run(f"import os\n{expr}")
            self.assertEqual(done["status"], "error", what)
            self.assertEqual(done["error"]["name"], "PermissionError", what)

    def test_os_exit_kills_and_respawns(self) -> None:
        self.assertOk(self.repl.run("x = 5"))
        done = self.repl.run("import os\nprint('bye', flush=True)\nos._exit(3)")
        self.assertEqual(done["status"], "killed")
        self.assertFalse(done["stateLost"])
        self.assertEqual(done["stdout"], "bye\n")
        done = self.repl.run("'x' in globals()")
        self.assertTrue(done["stateLost"])
        self.assertEqual(done["result"]["text"], "False")
        self.assertFalse(self.repl.run("1")["stateLost"])  # reported once only

    def test_sigkill_without_oom_is_killed(self) -> None:
        done = self.repl.run("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)")
        self.assertEqual(done["status"], "killed")
        self.assertTrue(self.repl.run("1")["stateLost"])

    def test_garbage_on_result_pipe_kills_kernel(self) -> None:
        # Spray a malformed frame at every writable fd; one of them is the result pipe.
        code = (
            "import os\n"
            "for fd in range(3, 64):\n"
            "    try:\n"
            "        os.write(fd, b'\\x00\\x00\\x00\\x05hello')\n"
            "    except OSError:\n"
            "        pass\n"
            "import time; time.sleep(5)"
        )
        done = self.repl.run(code)
        self.assertEqual(done["status"], "killed")
        self.assertLess(done["durationMs"], 4000)
        self.assertTrue(self.repl.run("1")["stateLost"])

    def test_closing_private_fds_kills_kernel(self) -> None:
        done = self.repl.run("import os\nos.closerange(3, 256)")
        self.assertEqual(done["status"], "killed")
        done = self.repl.run("print('fresh')")
        self.assertEqual((done["stdout"], done["stateLost"]), ("fresh\n", True))


class TestLimits(ReplTestCase):
    def test_timeout_interrupt_keeps_state(self) -> None:
        self.assertOk(self.repl.run("x = 1"))
        started = time.monotonic()
        done = self.repl.run("while True: pass", timeout_ms=1500)
        elapsed = time.monotonic() - started
        self.assertEqual(done["status"], "timeout")
        self.assertEqual(done["error"]["name"], "TimeoutError")
        self.assertIn("while True: pass", done["error"]["traceback"])
        self.assertGreaterEqual(elapsed, 1.4)
        self.assertLess(elapsed, 3.0)
        done = self.repl.run("x")
        self.assertEqual(done["result"]["text"], "1")
        self.assertFalse(done["stateLost"])

    def test_timeout_swallowed_interrupt_restarts(self) -> None:
        # The inner loop sleeps on purpose: on CPython 3.11 a KeyboardInterrupt raised
        # at the backward jump of a body-less `while True: pass` escapes the enclosing
        # try/except, so that loop would not actually swallow the interrupt.
        swallowers = (
            "import time\nwhile True:\n  try:\n    while True: time.sleep(0.01)\n"
            "  except KeyboardInterrupt: pass",
            "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True: pass",
        )
        for code in swallowers:
            with self.subTest(code=code):
                self.assertOk(self.repl.run("x = 1"))
                started = time.monotonic()
                done = self.repl.run(code, timeout_ms=1500)
                elapsed = time.monotonic() - started
                self.assertEqual(done["status"], "timeout")
                self.assertFalse(done["stateLost"])
                self.assertLess(elapsed, 4.0)  # 1.5 s timeout + 1 s grace + respawn
                done = self.repl.run("'x' in globals()")
                self.assertTrue(done["stateLost"])
                self.assertEqual(done["result"]["text"], "False")

    def test_timeout_kills_leftover_processes(self) -> None:
        code = textwrap.dedent(
            """
            import os, subprocess, time
            pids = [subprocess.Popen(['sleep', '60']).pid]
            for _ in range(5):
                pid = os.fork()
                if pid == 0:
                    while True:
                        time.sleep(0.05)
                pids.append(pid)
            open('pids.txt', 'w').write(' '.join(map(str, pids)))
            kept = 'yes'
            while True:
                pass
            """
        )
        done = self.repl.run(code, timeout_ms=1500)
        self.assertEqual(done["status"], "timeout")
        with open(os.path.join(self.repl.dir, "pids.txt")) as f:
            pids = [int(p) for p in f.read().split()]
        deadline = time.monotonic() + 3
        while any(pid_alive(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual([p for p in pids if pid_alive(p)], [])
        # The kernel itself survived, and reaped its killed children (no zombies).
        done = self.repl.run(
            f"import os\n[p for p in {pids} if os.path.exists(f'/proc/{{p}}')], kept"
        )
        self.assertEqual(done["result"]["text"], "([], 'yes')")
        self.assertFalse(done["stateLost"])

    def test_output_cap_truncates(self) -> None:
        done = self.repl.run("print('x' * 1_000_000)\nimport sys\nprint('e' * 5000, file=sys.stderr)", max_output=1000)
        self.assertOk(done)
        self.assertTrue(done["truncated"])
        self.assertEqual(done["stdout"], "x" * 1000)
        self.assertEqual(done["stderr"], "e" * 1000)
        done = self.repl.run("print('small')", max_output=1000)
        self.assertFalse(done["truncated"])

    def test_output_cap_streams_only_within_cap(self) -> None:
        done, frames = self.repl.wait_done(
            self.repl.start("for i in range(20000): print('é' * 50)", max_output=1001)
        )
        streamed = "".join(f["text"] for _, f in frames if f["ev"] == "stream" and f["name"] == "stdout")
        self.assertEqual(streamed, done["stdout"])
        self.assertLessEqual(len(done["stdout"].encode("utf-8")), 1001)
        self.assertNotIn("\ufffd", done["stdout"])  # never cut inside a character
        self.assertTrue(done["truncated"])

    def test_large_result_repr_capped(self) -> None:
        done = self.repl.run("list(range(100000))", max_output=500)
        self.assertLessEqual(len(done["result"]["text"]), 500)
        self.assertTrue(done["truncated"])

    def test_memory_status_from_oom_counter(self) -> None:
        counter = os.path.join(self.repl.dir, "memory.events")
        with open(counter, "w") as f:
            f.write("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n")
        repl = Client({"DRYDOCK_OOM_COUNTER_FILE": counter})
        self.addCleanup(repl.close)
        self.assertOk(repl.run("x = 1"))
        code = (
            f"open({counter!r}, 'w').write('oom 2\\noom_kill 2\\n')\n"
            "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)"
        )
        done = repl.run(code)
        self.assertEqual(done["status"], "memory")
        self.assertFalse(done["stateLost"])
        self.assertTrue(repl.run("1")["stateLost"])


class TestChannel(ReplTestCase):
    def test_streaming_is_prompt(self) -> None:
        code = "import time\nfor i in range(3):\n    print(i)\n    time.sleep(0.3)\nprint('tail', end='')\ntime.sleep(0.4)"
        done, frames = self.repl.wait_done(self.repl.start(code))
        self.assertOk(done)
        done_at = frames[-1][0]
        streams = [(at, f["text"]) for at, f in frames if f["ev"] == "stream"]
        self.assertEqual("".join(text for _, text in streams), "0\n1\n2\ntail")
        self.assertEqual(done["stdout"], "0\n1\n2\ntail")
        self.assertGreaterEqual(len(streams), 4)
        self.assertGreater(streams[-1][0] - streams[0][0], 0.6)  # spread out in time
        self.assertGreater(done_at - streams[0][0], 0.9)
        # The partial line was forwarded without waiting for a newline or the end.
        self.assertGreater(done_at - streams[-1][0], 0.25)

    def test_ping_during_exec(self) -> None:
        exec_id = self.repl.start("import time\ntime.sleep(1)")
        time.sleep(0.2)
        self.repl.send({"op": "ping", "id": "p1"})
        at, frame = self.repl.next_timed_frame()
        self.assertEqual(frame, {"ev": "pong", "id": "p1"})
        done, _ = self.repl.wait_done(exec_id)
        self.assertOk(done)

    def test_busy(self) -> None:
        first = self.repl.start("import time\ntime.sleep(0.5)\n'first'")
        second = self.repl.start("'second'")
        frame = self.repl.next_frame()
        self.assertEqual((frame["ev"], frame["id"], frame["status"]), ("done", second, "error"))
        self.assertEqual(frame["error"]["name"], "Busy")
        done, _ = self.repl.wait_done(first)
        self.assertEqual(done["result"]["text"], "'first'")

    def test_protocol_errors_are_survivable(self) -> None:
        self.repl.send_raw(struct.pack(">I", 9) + b"not json!")
        self.assertEqual(self.repl.next_frame()["ev"], "protocol_error")
        self.repl.send_raw(struct.pack(">I", 2) + b"[]")
        self.assertEqual(self.repl.next_frame()["ev"], "protocol_error")
        self.repl.send({"op": "bogus"})
        self.assertEqual(self.repl.next_frame()["ev"], "protocol_error")
        # An oversized frame is announced and its body skipped.
        size = 16 * 1024 * 1024 + 1
        self.repl.send_raw(struct.pack(">I", size))
        self.assertEqual(self.repl.next_frame()["ev"], "protocol_error")
        chunk = b"{" * (1 << 20)
        for _ in range(size // len(chunk)):
            self.repl.send_raw(chunk)
        self.repl.send_raw(b"{" * (size % len(chunk)))
        self.repl.send({"op": "ping", "id": "after"})
        self.assertEqual(self.repl.next_frame(), {"ev": "pong", "id": "after"})
        done = self.repl.run("'still fine'")
        self.assertEqual(done["result"]["text"], "'still fine'")

    def test_invalid_exec_rejected(self) -> None:
        self.repl.send({"op": "exec", "id": "bad", "code": 3, "timeoutMs": 1000, "maxOutputBytes": 10})
        frame = self.repl.next_frame()
        self.assertEqual((frame["ev"], frame["status"], frame["error"]["name"]), ("done", "error", "InvalidRequest"))

    def test_shutdown_exits_zero_and_kills_kernel(self) -> None:
        kernel_pid = int(self.repl.run("import os; os.getpid()")["result"]["text"])
        self.repl.send({"op": "shutdown"})
        self.assertEqual(self.repl.proc.wait(timeout=5), 0)
        self.assertFalse(pid_alive(kernel_pid))

    def test_stdin_eof_exits_zero(self) -> None:
        kernel_pid = int(self.repl.run("import os; os.getpid()")["result"]["text"])
        self.repl.start("import time; time.sleep(30)")
        assert self.repl.proc.stdin is not None
        self.repl.proc.stdin.close()
        self.assertEqual(self.repl.proc.wait(timeout=5), 0)
        self.assertFalse(pid_alive(kernel_pid))


class TestFiles(ReplTestCase):
    """The change report in `done` and the fs-delete request."""

    def write(self, rel: str, text: str = "x") -> str:
        path = os.path.join(self.repl.dir, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        return path

    def fs_delete(self, paths: list[str], request_id: str = "d1") -> dict[str, Any]:
        self.repl.send({"op": "fs-delete", "id": request_id, "paths": paths})
        frame = self.repl.next_frame()
        self.assertEqual((frame["ev"], frame["id"]), ("fs-deleted", request_id), frame)
        return frame

    def test_changed_deleted_and_artifacts_ignored(self) -> None:
        self.write("data/in.csv", "a,b\n")
        self.write("old.txt", "bye")
        self.write("keep.txt", "same")
        done = self.repl.run(
            textwrap.dedent(
                """\
                import os
                os.makedirs('out', exist_ok=True)
                open('out/summary.csv', 'w').write('n\\n1\\n')
                open('data/in.csv', 'a').write('1,2\\n')
                os.remove('old.txt')
                os.makedirs('artifacts/plots', exist_ok=True)
                open('artifacts/plots/p.png', 'wb').write(b'png')
                open('artifacts/a.txt', 'w').write('x')
                """
            )
        )
        self.assertOk(done)
        self.assertEqual(
            done["files"],
            {"changed": ["/data/in.csv", "/out/summary.csv"], "deleted": ["/old.txt"], "skipped": []},
        )

    def test_same_size_rewrite_right_after_host_write(self) -> None:
        # The host pushes a file and the cell rewrites it with the same size at once.
        # (Smoke test: the same-timestamp-tick race it guards against is not hit reliably.)
        self.write("n.txt", "1")
        done = self.repl.run("open('n.txt', 'w').write('2')")
        self.assertEqual(done["files"]["changed"], ["/n.txt"])

    def test_no_changes_is_empty(self) -> None:
        self.write("a/b.txt")
        self.assertOk(self.repl.run("x = open('a/b.txt').read()"))
        done = self.repl.run("len(x)")
        self.assertOk(done)
        self.assertEqual(done["files"], {"changed": [], "deleted": [], "skipped": []})

    # sessionUnchanged: the host promises it put nothing into the session dir since the
    # last done, so the supervisor may skip walking the tree when no file event came.

    def test_unchanged_session_reports_the_code_changes_only(self) -> None:
        self.write("data/in.csv", "a\n")
        self.assertOk(self.repl.run("x = 1"))
        quiet = self.repl.run("y = 2", session_unchanged=True)
        self.assertEqual(quiet["files"], {"changed": [], "deleted": [], "skipped": []})
        wrote = self.repl.run(
            "open('data/in.csv', 'a').write('1\\n')\nos = __import__('os')\nos.makedirs('new/deep')\nopen('new/deep/f.txt', 'w').write('f')",
            session_unchanged=True,
        )
        self.assertEqual(wrote["files"]["changed"], ["/data/in.csv", "/new/deep/f.txt"])
        # A folder created by the code is watched from then on.
        again = self.repl.run("open('new/deep/f.txt', 'w').write('g')", session_unchanged=True)
        self.assertEqual(again["files"]["changed"], ["/new/deep/f.txt"])
        gone = self.repl.run("os.remove('data/in.csv')", session_unchanged=True)
        self.assertEqual(gone["files"], {"changed": [], "deleted": ["/data/in.csv"], "skipped": []})

    def test_same_size_rewrite_in_the_next_unchanged_exec(self) -> None:
        self.assertOk(self.repl.run("open('n.txt', 'w').write('1')"))
        done = self.repl.run("open('n.txt', 'w').write('2')", session_unchanged=True)
        self.assertEqual(done["files"]["changed"], ["/n.txt"])

    def test_background_write_between_execs_is_reported_next(self) -> None:
        self.assertOk(
            self.repl.run(
                "import threading, time\n"
                "def later():\n    time.sleep(0.3)\n    open('late.txt', 'w').write('late')\n"
                "threading.Thread(target=later).start()"
            )
        )
        time.sleep(0.6)
        done = self.repl.run("z = 3", session_unchanged=True)
        self.assertEqual(done["files"]["changed"], ["/late.txt"])

    def test_host_writes_are_not_reported_unless_promised_otherwise(self) -> None:
        self.assertOk(self.repl.run("x = 1"))
        self.write("pushed.txt", "from the host")
        # The host wrote: a fresh snapshot, so its file is not the code's change.
        done = self.repl.run("y = 1", session_unchanged=False)
        self.assertEqual(done["files"]["changed"], [])
        # The host's fs-delete also makes the next exec start from a fresh snapshot.
        self.fs_delete(["/pushed.txt"])
        done = self.repl.run("y = 2", session_unchanged=True)
        self.assertEqual(done["files"], {"changed": [], "deleted": [], "skipped": []})

    def test_session_unchanged_must_be_boolean(self) -> None:
        self.repl.send({"op": "exec", "id": "bad", "code": "1", "sessionUnchanged": "yes"})
        frame = self.repl.next_frame()
        self.assertEqual((frame["id"], frame["error"]["name"]), ("bad", "InvalidRequest"))

    def test_rejected_exec_has_empty_report(self) -> None:
        os.makedirs(os.path.join(self.repl.dir, "artifacts"))
        self.write("artifacts/there.txt")
        self.repl.send({"op": "exec", "id": "bad", "code": 3, "timeoutMs": 1000, "maxOutputBytes": 10})
        frame = self.repl.next_frame()
        self.assertEqual(frame["files"], {"changed": [], "deleted": [], "skipped": []})
        self.assertEqual((frame["artifacts"], frame["figures"]), (EMPTY_ARTIFACTS, []))
        self.repl.send({"op": "exec", "id": "bad2", "code": "1", "captureFigures": "no"})
        frame = self.repl.next_frame()
        self.assertEqual((frame["id"], frame["error"]["name"]), ("bad2", "InvalidRequest"))

    def test_symlink_and_fifo_skipped(self) -> None:
        done = self.repl.run(
            textwrap.dedent(
                """\
                import os
                os.symlink('/etc/passwd', 'pw')
                os.mkfifo('pipe')
                open('real.txt', 'w').write('ok')
                """
            ),
            timeout_ms=5000,
        )
        self.assertOk(done)
        self.assertEqual(done["files"]["changed"], ["/real.txt"])
        self.assertEqual(
            done["files"]["skipped"],
            [{"path": "/pipe", "reason": "fifo"}, {"path": "/pw", "reason": "symlink"}],
        )
        self.assertEqual(done["files"]["deleted"], [])
        # The supervisor did not block on the FIFO: it still answers.
        self.repl.send({"op": "ping", "id": "p"})
        self.assertEqual(self.repl.next_frame(timeout=5), {"ev": "pong", "id": "p"})

    def test_hard_links_skipped_and_not_deleted(self) -> None:
        self.write("orig.txt", "synced before")
        done = self.repl.run("import os\nos.link('orig.txt', 'twin.txt')")
        self.assertOk(done)
        # Both names are now links to one inode: neither is mirrored, and the file the
        # thread already had is not reported deleted.
        self.assertEqual(done["files"]["changed"], [])
        self.assertEqual(done["files"]["deleted"], [])
        self.assertEqual(
            done["files"]["skipped"],
            [{"path": "/orig.txt", "reason": "hardlink"}, {"path": "/twin.txt", "reason": "hardlink"}],
        )
        done = self.repl.run("os.remove('twin.txt')")
        self.assertEqual(done["files"]["changed"], ["/orig.txt"])  # a plain file again
        self.assertEqual(done["files"]["deleted"], [])

    def test_report_after_timeout_and_kill(self) -> None:
        done = self.repl.run("open('t.txt', 'w').write('x')\nimport time\ntime.sleep(30)", timeout_ms=300)
        self.assertEqual(done["status"], "timeout")
        self.assertEqual(done["files"]["changed"], ["/t.txt"])
        done = self.repl.run("import os\nos.remove('t.txt')\nos._exit(3)")
        self.assertEqual(done["status"], "killed")
        self.assertEqual(done["files"]["deleted"], ["/t.txt"])

    def test_fs_delete(self) -> None:
        self.write("a/b.txt")
        self.write("c.txt")
        os.mkdir(os.path.join(self.repl.dir, "emptydir"))
        frame = self.fs_delete(["/a/b.txt", "/c.txt", "/nope.txt", "/a/nope/x", "/emptydir", "../x", "/a/../c.txt", "rel.txt", "/"])
        self.assertEqual(frame["deleted"], ["/a/b.txt", "/c.txt"])
        self.assertEqual(frame["missing"], ["/nope.txt", "/a/nope/x"])
        self.assertEqual(
            frame["refused"],
            [
                {"path": "/emptydir", "reason": "directory"},
                {"path": "../x", "reason": "invalid"},
                {"path": "/a/../c.txt", "reason": "invalid"},
                {"path": "rel.txt", "reason": "invalid"},
                {"path": "/", "reason": "invalid"},
            ],
        )
        self.assertTrue(os.path.isdir(os.path.join(self.repl.dir, "a")))  # parents stay
        done = self.repl.run("import os\n(os.path.exists('a/b.txt'), os.path.exists('c.txt'))")
        self.assertEqual(done["result"]["text"], "(False, False)")
        self.assertEqual(done["files"]["deleted"], [])  # deleted before the exec: not reported

    def test_fs_delete_fifo_and_socket(self) -> None:
        import socket

        os.makedirs(os.path.join(self.repl.dir, "artifacts/sub"))
        os.mkfifo(os.path.join(self.repl.dir, "artifacts/pipe"))
        sock = socket.socket(socket.AF_UNIX)
        self.addCleanup(sock.close)
        sock.bind(os.path.join(self.repl.dir, "artifacts/sock"))
        # Returns at once: unlinking a FIFO never opens it (nobody writes to this one).
        frame = self.fs_delete(["/artifacts/pipe", "/artifacts/sock", "/artifacts/sub"])
        self.assertEqual(frame["deleted"], ["/artifacts/pipe", "/artifacts/sock"])
        self.assertEqual(frame["refused"], [{"path": "/artifacts/sub", "reason": "directory"}])
        self.assertEqual(sorted(os.listdir(os.path.join(self.repl.dir, "artifacts"))), ["sub"])

    def test_fs_delete_refuses_symlinked_directory(self) -> None:
        outside = tempfile.mkdtemp(prefix="drydock-outside-")
        self.addCleanup(shutil.rmtree, outside, True)
        target = os.path.join(outside, "file")
        with open(target, "w") as f:
            f.write("precious")
        os.symlink(outside, os.path.join(self.repl.dir, "link"))
        os.symlink(target, os.path.join(self.repl.dir, "filelink"))
        frame = self.fs_delete(["/link/file", "/filelink"])
        self.assertEqual(frame["refused"], [{"path": "/link/file", "reason": "symlink"}])
        # A symlink itself may go; its target is untouched.
        self.assertEqual(frame["deleted"], ["/filelink"])
        self.assertFalse(os.path.lexists(os.path.join(self.repl.dir, "filelink")))
        self.assertTrue(os.path.exists(target))

    def test_fs_delete_busy_and_bad_request(self) -> None:
        self.write("x.txt")
        exec_id = self.repl.start("import time\ntime.sleep(0.5)")
        frame = self.fs_delete(["/x.txt"])
        self.assertEqual(frame["refused"], [{"path": "/x.txt", "reason": "busy"}])
        self.assertOk(self.repl.wait_done(exec_id)[0])
        self.assertTrue(os.path.exists(os.path.join(self.repl.dir, "x.txt")))
        self.repl.send({"op": "fs-delete", "id": "d2", "paths": "/x.txt"})
        self.assertEqual(self.repl.next_frame()["ev"], "protocol_error")


class TestArtifacts(ReplTestCase):
    """The `artifacts` listing of <session>/artifacts in every `done`."""

    def path(self, rel: str) -> str:
        return os.path.join(self.repl.dir, rel)

    def test_absent_folder_is_empty(self) -> None:
        done = self.repl.run("1")
        self.assertEqual(done["artifacts"], EMPTY_ARTIFACTS)
        os.rmdir(self.path("artifacts"))
        with open(self.path("artifacts"), "w") as f:  # not a directory
            f.write("x")
        self.assertEqual(self.repl.run("1")["artifacts"], EMPTY_ARTIFACTS)

    def test_folder_exists_before_every_exec(self) -> None:
        # Code saves straight into artifacts/, in a new session and after the host
        # emptied and removed the folder.
        self.assertOk(self.repl.run("1"))
        self.assertTrue(os.path.isdir(self.path("artifacts")))
        self.assertOk(self.repl.run("open('artifacts/a.txt', 'w').write('a')"))
        os.remove(self.path("artifacts/a.txt"))
        os.rmdir(self.path("artifacts"))
        done = self.repl.run("open('artifacts/b.txt', 'w').write('b')")
        self.assertOk(done)
        self.assertEqual(done["artifacts"]["files"], [{"path": "/artifacts/b.txt", "size": 1}])

    def test_listing_files_and_skipped(self) -> None:
        done = self.repl.run(
            textwrap.dedent(
                """\
                import os, socket
                os.makedirs('artifacts/sub/deeper', exist_ok=True)
                os.makedirs('artifacts/empty', exist_ok=True)
                open('artifacts/plot.png', 'wb').write(b'12345')
                open('artifacts/sub/deeper/data.csv', 'w').write('a,b\\n')
                open('artifacts/sub/zero.txt', 'w').close()
                os.symlink('/etc/passwd', 'artifacts/pw')
                os.symlink('/etc', 'artifacts/etcdir')
                open('artifacts/orig.txt', 'w').write('xy')
                os.link('artifacts/orig.txt', 'artifacts/sub/twin.txt')
                os.mkfifo('artifacts/pipe')
                s = socket.socket(socket.AF_UNIX)
                s.bind('artifacts/sock')
                open(b'artifacts/bad\\xff.txt', 'w').close()
                """
            ),
            timeout_ms=5000,
        )
        self.assertOk(done)
        expected = {
            "files": [
                {"path": "/artifacts/plot.png", "size": 5},
                {"path": "/artifacts/sub/deeper/data.csv", "size": 4},
                {"path": "/artifacts/sub/zero.txt", "size": 0},
            ],
            "skipped": [
                {"path": "/artifacts/bad?.txt", "reason": "encoding"},
                {"path": "/artifacts/etcdir", "reason": "symlink"},
                {"path": "/artifacts/orig.txt", "reason": "hardlink"},
                {"path": "/artifacts/pipe", "reason": "fifo"},
                {"path": "/artifacts/pw", "reason": "symlink"},
                {"path": "/artifacts/sock", "reason": "socket"},
                {"path": "/artifacts/sub/twin.txt", "reason": "hardlink"},
            ],
            "truncated": False,
        }
        self.assertEqual(done["artifacts"], expected)
        self.assertEqual(done["files"], {"changed": [], "deleted": [], "skipped": []})  # ignored there
        # The supervisor did not block on the FIFO: it still answers.
        self.repl.send({"op": "ping", "id": "p"})
        self.assertEqual(self.repl.next_frame(timeout=5), {"ev": "pong", "id": "p"})
        # Not a diff: the next exec lists the same entries again.
        self.assertEqual(self.repl.run("None")["artifacts"], expected)
        # What the host deletes is gone from the next listing.
        self.repl.send({"op": "fs-delete", "id": "d", "paths": ["/artifacts/plot.png", "/artifacts/pipe"]})
        self.assertEqual(self.repl.next_frame()["deleted"], ["/artifacts/plot.png", "/artifacts/pipe"])
        listing = self.repl.run("None")["artifacts"]
        self.assertNotIn({"path": "/artifacts/plot.png", "size": 5}, listing["files"])
        self.assertNotIn({"path": "/artifacts/pipe", "reason": "fifo"}, listing["skipped"])

    def test_symlinked_artifacts_not_followed(self) -> None:
        outside = tempfile.mkdtemp(prefix="drydock-outside-")
        self.addCleanup(shutil.rmtree, outside, True)
        with open(os.path.join(outside, "secret.txt"), "w") as f:
            f.write("secret")
        os.symlink(outside, self.path("artifacts"))
        done = self.repl.run("1")
        self.assertEqual(
            done["artifacts"],
            {"files": [], "skipped": [{"path": "/artifacts", "reason": "symlink"}], "truncated": False},
        )
        self.assertEqual(done["files"], {"changed": [], "deleted": [], "skipped": []})

    def test_truncated_at_10000_entries(self) -> None:
        os.makedirs(self.path("artifacts/many"))
        for i in range(10_050):
            open(self.path(f"artifacts/many/{i:05}"), "w").close()
        listing = self.repl.run("1")["artifacts"]
        self.assertTrue(listing["truncated"])
        # 10,000 entries counted, one of which is the directory "many" itself.
        self.assertEqual(len(listing["files"]), 9_999)
        self.assertEqual(listing["skipped"], [])

    def test_unreadable_directory(self) -> None:
        repl = self.repl
        if os.geteuid() == 0:  # root reads anything: test as an unprivileged user
            if not os.access(SYSTEM_PYTHON, os.X_OK):
                self.skipTest(f"running as root and {SYSTEM_PYTHON} is missing")
            repl = Client(python=SYSTEM_PYTHON, uid=NOBODY)
            self.addCleanup(repl.close)
        code = textwrap.dedent(
            """\
            import os
            os.makedirs('artifacts/locked', exist_ok=True)
            open('artifacts/locked/x.txt', 'w').write('x')
            open('artifacts/ok.txt', 'w').write('ok')
            os.chmod('artifacts/locked', 0)
            """
        )
        done = repl.run(code)
        self.assertOk(done)
        self.assertEqual(
            done["artifacts"],
            {
                "files": [{"path": "/artifacts/ok.txt", "size": 2}],
                "skipped": [{"path": "/artifacts/locked", "reason": "unreadable"}],
                "truncated": False,
            },
        )
        repl.run("os.chmod('artifacts/locked', 0o700)")  # so the cleanup can remove it


class TestFigures(ReplTestCase):
    """Automatic capture of open matplotlib figures after each cell."""

    def setUp(self) -> None:
        super().setUp()
        self.artifacts = os.path.join(self.repl.dir, "artifacts")

    def read(self, rel: str) -> bytes:
        with open(os.path.join(self.repl.dir, rel.lstrip("/")), "rb") as f:
            return f.read()

    def test_no_matplotlib_import_no_capture(self) -> None:
        # Runs without matplotlib installed too: the kernel must never import it.
        done = self.repl.run("x = 1\nprint('hi')")
        self.assertOk(done)
        self.assertEqual((done["figures"], done["result"]), ([], None))
        self.assertEqual(os.listdir(self.artifacts), [])
        done = self.repl.run("import sys\n[m for m in sys.modules if m.split('.')[0] == 'matplotlib']")
        self.assertEqual(done["result"]["text"], "[]")
        self.assertEqual(self.repl.run("'matplotlib' not in sys.modules")["result"]["text"], "True")

    @unittest.skipUnless(HAVE_MATPLOTLIB, "matplotlib is not importable by this Python")
    def test_two_figures_captured_and_closed(self) -> None:
        done = self.repl.run(
            textwrap.dedent(
                """\
                import matplotlib.pyplot as plt
                plt.figure()
                plt.plot([1, 2, 3])
                fig, ax = plt.subplots()
                bars = ax.bar(['a', 'b'], [3, 1])
                """
            )
        )
        self.assertOk(done)
        self.assertEqual(done["stderr"], "")
        figures = ["/artifacts/figure-1.png", "/artifacts/figure-2.png"]
        self.assertEqual(done["figures"], figures)
        data = [self.read(p) for p in figures]
        for blob in data:
            self.assertTrue(blob.startswith(PNG_MAGIC))
        self.assertNotEqual(data[0], data[1])
        # The last figure is the cell's result, as in a notebook.
        self.assertEqual(done["result"], {"png": base64.b64encode(data[1]).decode("ascii")})
        self.assertFalse(done["truncated"])
        self.assertEqual(
            done["artifacts"],
            {
                "files": [{"path": p, "size": len(b)} for p, b in zip(figures, data)],
                "skipped": [],
                "truncated": False,
            },
        )
        done = self.repl.run("plt.get_fignums()")
        self.assertEqual((done["result"]["text"], done["figures"]), ("[]", []))
        self.assertNotIn("png", done["result"])

    @unittest.skipUnless(HAVE_MATPLOTLIB, "matplotlib is not importable by this Python")
    def test_png_added_to_value_and_error_results(self) -> None:
        done = self.repl.run("import matplotlib.pyplot as plt\nplt.plot([1, 2])\n6 * 7")
        self.assertOk(done)
        png = base64.b64encode(self.read("/artifacts/figure-1.png")).decode("ascii")
        self.assertEqual(done["result"], {"text": "42", "html": None, "png": png})
        # A failing cell still shows (and saves) what it drew.
        done = self.repl.run("plt.plot([2, 1])\n1 / 0")
        self.assertEqual(done["status"], "error")
        self.assertEqual(done["figures"], ["/artifacts/figure-2.png"])
        png = base64.b64encode(self.read("/artifacts/figure-2.png")).decode("ascii")
        self.assertEqual(done["result"], {"png": png})

    @unittest.skipUnless(HAVE_MATPLOTLIB, "matplotlib is not importable by this Python")
    def test_existing_files_not_overwritten(self) -> None:
        os.makedirs(self.artifacts)
        for name in ("figure-1.png", "figure-3.png"):
            with open(os.path.join(self.artifacts, name), "wb") as f:
                f.write(b"host's")
        done = self.repl.run("import matplotlib.pyplot as plt\nplt.figure()\nplt.figure()\nNone")
        self.assertEqual(done["figures"], ["/artifacts/figure-2.png", "/artifacts/figure-4.png"])
        for name in ("figure-1.png", "figure-3.png"):
            self.assertEqual(self.read(f"artifacts/{name}"), b"host's")
        self.assertTrue(self.read("artifacts/figure-4.png").startswith(PNG_MAGIC))

    @unittest.skipUnless(HAVE_MATPLOTLIB, "matplotlib is not importable by this Python")
    def test_capture_disabled_leaves_figures_open(self) -> None:
        done = self.repl.run(
            "import matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.figure()\nNone", capture_figures=False
        )
        self.assertOk(done)
        self.assertEqual((done["figures"], done["result"]), ([], None))
        self.assertEqual(os.listdir(self.artifacts), [])
        done = self.repl.run("plt.get_fignums()", capture_figures=False)
        self.assertEqual(done["result"], {"text": "[1, 2]", "html": None})
        # The next capturing cell takes them.
        done = self.repl.run("None")
        self.assertEqual(done["figures"], ["/artifacts/figure-1.png", "/artifacts/figure-2.png"])
        self.assertEqual(self.repl.run("plt.get_fignums()")["result"]["text"], "[]")

    @unittest.skipUnless(HAVE_MATPLOTLIB, "matplotlib is not importable by this Python")
    def test_render_error_reported_on_stderr(self) -> None:
        code = textwrap.dedent(
            """\
            import matplotlib.pyplot as plt
            plt.figure()
            plt.text(0.5, 0.5, r'$\\undefinedcommand{x}$')
            plt.figure()
            plt.plot([1, 2])
            print('cell output')
            """
        )
        done = self.repl.run(code)
        self.assertOk(done)
        self.assertEqual(done["stdout"], "cell output\n")
        lines = done["stderr"].splitlines()
        self.assertEqual(len(lines), 1, done["stderr"])
        self.assertTrue(lines[0].startswith("drydock: figure capture: cannot render figure 1: ValueError"), lines)
        # The broken figure is closed anyway (or it would fail after every cell); the
        # good one is saved under the first free name.
        self.assertEqual(done["figures"], ["/artifacts/figure-1.png"])
        self.assertEqual(self.repl.run("plt.get_fignums()")["result"]["text"], "[]")

    @unittest.skipUnless(HAVE_MATPLOTLIB, "matplotlib is not importable by this Python")
    def test_artifacts_symlink_refused(self) -> None:
        outside = tempfile.mkdtemp(prefix="drydock-outside-")
        self.addCleanup(shutil.rmtree, outside, True)
        os.symlink(outside, self.artifacts)
        done = self.repl.run("import matplotlib.pyplot as plt\nplt.plot([1])\nNone")
        self.assertOk(done)
        self.assertEqual(done["figures"], [])
        self.assertIn("drydock: figure capture: cannot use", done["stderr"])
        self.assertEqual(os.listdir(outside), [])
        # Left open: nothing is lost.
        done = self.repl.run("plt.get_fignums()", capture_figures=False)
        self.assertEqual(done["result"]["text"], "[1]")

    @unittest.skipUnless(HAVE_MATPLOTLIB, "matplotlib is not importable by this Python")
    def test_png_over_output_cap_left_out(self) -> None:
        done = self.repl.run("import matplotlib.pyplot as plt\nplt.plot([1, 2])\nNone", max_output=100)
        self.assertOk(done)
        self.assertEqual((done["result"], done["truncated"]), (None, True))
        self.assertEqual(done["figures"], ["/artifacts/figure-1.png"])  # the file is complete
        self.assertTrue(self.read("/artifacts/figure-1.png").startswith(PNG_MAGIC))

    @unittest.skipUnless(HAVE_MATPLOTLIB, "matplotlib is not importable by this Python")
    def test_timeout_defers_capture(self) -> None:
        done = self.repl.run(
            "import matplotlib.pyplot as plt\nplt.plot([1, 2])\nwhile True: pass", timeout_ms=1500
        )
        self.assertEqual(done["status"], "timeout")
        self.assertEqual(done["figures"], [])
        done = self.repl.run("None")
        self.assertFalse(done["stateLost"])
        self.assertEqual(done["figures"], ["/artifacts/figure-1.png"])


if __name__ == "__main__":
    unittest.main()
