"""The host channel: streaming, ping, busy, protocol errors, shutdown and EOF."""

from __future__ import annotations

import struct
import time
import unittest

from repl_test_support import ReplTestCase, pid_alive


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


if __name__ == "__main__":
    unittest.main()
