"""The host's `interrupt`: stopping the exec in progress before its time limit."""

from __future__ import annotations

import os
import textwrap
import time
import unittest
from typing import Any

from repl_test_support import ReplTestCase, pid_alive

# Far beyond what any assertion below waits: an interrupt that did not work shows as a
# test that hangs on this, not as one that passes late.
LONG_TIMEOUT_MS = 120_000


class TestInterrupt(ReplTestCase):
    def start_and_wait_for(self, code: str, marker: str) -> tuple[str, list[tuple[float, dict[str, Any]]]]:
        """Starts `code` and returns once it has printed `marker` (it is running)."""
        exec_id = self.repl.start(code, timeout_ms=LONG_TIMEOUT_MS)
        seen = []
        while True:
            at, frame = self.repl.next_timed_frame()
            seen.append((at, frame))
            if frame.get("ev") == "stream" and marker in frame.get("text", ""):
                return exec_id, seen
            self.assertNotEqual(frame.get("ev"), "done", frame)

    def test_interrupt_stops_the_cell_and_keeps_state(self) -> None:
        self.assertOk(self.repl.run("x = 41"))
        exec_id, _ = self.start_and_wait_for("print('running', flush=True)\nwhile True: pass", "running")
        sent = time.monotonic()
        self.repl.send({"op": "interrupt", "id": exec_id})
        done, _ = self.repl.wait_done(exec_id)
        self.assertLess(time.monotonic() - sent, 5.0)
        self.assertEqual(done["status"], "error")
        self.assertEqual(done["error"]["name"], "KeyboardInterrupt")
        self.assertIn("while True: pass", done["error"]["traceback"])
        self.assertIn("running", done["stdout"])
        done = self.repl.run("x + 1")
        self.assertEqual(done["result"]["text"], "42")
        self.assertFalse(done["stateLost"])

    def test_interrupt_ends_processes_the_cell_started(self) -> None:
        code = textwrap.dedent(
            """
            import subprocess
            child = subprocess.Popen(['sleep', '60'])
            open('child.txt', 'w').write(str(child.pid))
            print('running', flush=True)
            while True:
                pass
            """
        )
        exec_id, _ = self.start_and_wait_for(code, "running")
        self.repl.send({"op": "interrupt", "id": exec_id})
        done, _ = self.repl.wait_done(exec_id)
        self.assertEqual(done["error"]["name"], "KeyboardInterrupt")
        with open(os.path.join(self.repl.dir, "child.txt")) as f:
            child = int(f.read())
        deadline = time.monotonic() + 3
        while pid_alive(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertFalse(pid_alive(child))

    def test_swallowed_interrupt_restarts_the_kernel(self) -> None:
        self.assertOk(self.repl.run("x = 1"))
        code = "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nprint('running', flush=True)\nwhile True: pass"
        exec_id, _ = self.start_and_wait_for(code, "running")
        sent = time.monotonic()
        self.repl.send({"op": "interrupt", "id": exec_id})
        done, _ = self.repl.wait_done(exec_id)
        self.assertLess(time.monotonic() - sent, 5.0)  # 1 s grace, then SIGKILL
        self.assertEqual(done["status"], "killed")
        self.assertEqual(done["error"]["name"], "KeyboardInterrupt")
        self.assertIn("did not stop", done["error"]["value"])
        done = self.repl.run("'x' in globals()")
        self.assertTrue(done["stateLost"])
        self.assertEqual(done["result"]["text"], "False")

    def test_interrupt_of_another_or_finished_exec_does_nothing(self) -> None:
        self.assertOk(self.repl.run("x = 1"))
        # Idle, an exec that has ended, and an id that never ran: no frame, no effect.
        self.repl.send({"op": "interrupt", "id": "e1"})
        self.repl.send({"op": "interrupt", "id": "never-ran"})
        done, seen = self.repl.wait_done(self.repl.start("import time\ntime.sleep(0.3)\nx + 1"))
        self.assertEqual([f["ev"] for _, f in seen], ["done"])
        self.assertEqual(done["result"]["text"], "2")
        # While an exec runs, an interrupt naming another id leaves it alone.
        exec_id = self.repl.start("import time\ntime.sleep(0.5)\n'finished'", timeout_ms=LONG_TIMEOUT_MS)
        self.repl.send({"op": "interrupt", "id": "someone-else"})
        done, _ = self.repl.wait_done(exec_id)
        self.assertOk(done)
        self.assertEqual(done["result"]["text"], "'finished'")

    def test_interrupt_needs_a_string_id(self) -> None:
        self.repl.send({"op": "interrupt", "id": 7})
        frame = self.repl.next_frame()
        self.assertEqual(frame["ev"], "protocol_error")
        self.assertIn("interrupt needs a string id", frame["message"])


if __name__ == "__main__":
    unittest.main()
