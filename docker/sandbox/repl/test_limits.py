"""Timeouts, the output cap, and out-of-memory kills."""

from __future__ import annotations

import os
import textwrap
import time
import unittest

from repl_test_support import Client, ReplTestCase, pid_alive


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


if __name__ == "__main__":
    unittest.main()
