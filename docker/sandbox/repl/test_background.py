"""Background processes (background.py): started at once, output kept and read while
they run (then live while watched), stdin written and closed, signals delivered, exit
reported with the output's tail; never mixed into an exec's or a command's output."""

from __future__ import annotations

import base64
import os
import time
import unittest
from typing import Any

from repl_test_support import Client, ReplTestCase, pid_alive


class BackgroundClient:
    def __init__(self, repl: Client) -> None:
        self.repl = repl
        self.pending: list[dict[str, Any]] = []
        self.n = 0

    def start(self, line: str, **spec: Any) -> dict[str, Any]:
        self.n += 1
        pid_id = f"bg{self.n}"
        self.repl.send({"op": "exec", "id": pid_id, "background": True,
                        "command": {"argv": ["/bin/bash", "-c", line], "cwd": self.repl.dir, **spec},
                        "timeoutMs": 1000, "maxOutputBytes": 1 << 20})
        return self.expect(lambda f: f.get("id") == pid_id and f["ev"] in ("bg-started", "bg-refused"))

    def expect(self, match: Any, timeout: float = 15.0) -> dict[str, Any]:
        for i, frame in enumerate(self.pending):
            if match(frame):
                return self.pending.pop(i)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            frame = self.repl.next_frame(timeout=deadline - time.monotonic())
            if match(frame):
                return frame
            self.pending.append(frame)
        raise AssertionError("no matching frame")

    def request(self, op: str, **fields: Any) -> dict[str, Any]:
        self.n += 1
        rid = f"r{self.n}"
        self.repl.send({"op": op, "id": rid, **fields})
        return self.expect(lambda f: f.get("id") == rid)


class TestBackground(ReplTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.bg = BackgroundClient(self.repl)

    def test_started_at_once_output_read_while_running_then_exit(self) -> None:
        started = self.bg.start("echo first; sleep 0.5; echo second >&2; sleep 0.2; exit 5")
        self.assertEqual(started["ev"], "bg-started", started)
        self.assertTrue(pid_alive(started["pid"]))
        time.sleep(0.2)
        out = self.bg.request("bg-read", process="bg1", after=0)
        self.assertEqual((out["known"], out["exit"], [c[1:] for c in out["chunks"]]), (True, None, [["stdout", "first\n"]]))
        # Watch from what was read: the rest arrives live.
        last = out["chunks"][-1][0]
        self.assertEqual(self.bg.request("bg-read", process="bg1", after=last, watch=True)["chunks"], [])
        chunk = self.bg.expect(lambda f: f["ev"] == "bg-chunk")
        self.assertEqual((chunk["process"], chunk["name"], chunk["text"], chunk["seq"]), ("bg1", "stderr", "second\n", last + 1))
        exit_frame = self.bg.expect(lambda f: f["ev"] == "bg-exit")
        self.assertEqual((exit_frame["exitCode"], exit_frame["signal"], exit_frame["stdout"], exit_frame["stderr"]), (5, None, "first\n", "second\n"))
        after = self.bg.request("bg-read", process="bg1", after=0)
        self.assertEqual(after["exit"], {"exitCode": 5, "signal": None})
        self.assertEqual(len(after["chunks"]), 2)

    def test_stdin_written_then_closed(self) -> None:
        self.bg.start("while read line; do echo \"got $line\"; done; echo done-reading")
        for text, eof in (("one\n", False), ("two\n", True)):
            answer = self.bg.request("bg-stdin", process="bg1", data64=base64.b64encode(text.encode()).decode(), eof=eof)
            self.assertEqual((answer["accepted"], answer["refused"]), (len(text), None))
        exit_frame = self.bg.expect(lambda f: f["ev"] == "bg-exit")
        self.assertEqual((exit_frame["exitCode"], exit_frame["stdout"]), (0, "got one\ngot two\ndone-reading\n"))
        refused = self.bg.request("bg-stdin", process="bg1", data64="eA==", eof=False)
        self.assertEqual(refused["refused"], "exited")

    def test_signal_delivered_to_the_group(self) -> None:
        started = self.bg.start("trap 'echo term; exit 143' TERM; sleep 300 & wait")
        time.sleep(0.2)
        self.assertTrue(self.bg.request("bg-signal", process="bg1", signal="SIGTERM")["delivered"])
        exit_frame = self.bg.expect(lambda f: f["ev"] == "bg-exit")
        self.assertEqual(exit_frame["exitCode"], 143)
        self.assertFalse(pid_alive(started["pid"]))
        self.assertFalse(self.bg.request("bg-signal", process="bg1", signal="SIGKILL")["delivered"])
        self.assertFalse(self.bg.request("bg-signal", process="nope", signal="SIGKILL")["delivered"])

    def test_output_never_leaks_into_execs_or_commands(self) -> None:
        self.bg.start("while :; do echo noise; echo noise >&2; sleep 0.01; done")
        time.sleep(0.1)
        self.assertEqual(self.repl.run("print('mine')")["stdout"], "mine\n")
        self.assertEqual(self.repl.shell("sleep 0.1; echo mine")["stdout"], "mine\n")
        # And an exec or a command runs while it does.
        self.assertEqual(self.repl.run("x = 1\nx + 1")["result"]["text"], "2")

    def test_kept_output_is_bounded(self) -> None:
        self.bg.start("head -c 3000000 /dev/zero | tr '\\0' a; echo; echo end")
        exit_frame = self.bg.expect(lambda f: f["ev"] == "bg-exit")
        self.assertTrue(exit_frame["truncated"])
        self.assertLessEqual(len(exit_frame["stdout"]), (1 << 20) + 65536)
        self.assertTrue(exit_frame["stdout"].endswith("end\n"))

    def test_limit_and_unknown(self) -> None:
        for _ in range(16):
            self.assertEqual(self.bg.start("sleep 30")["ev"], "bg-started")
        refused = self.bg.start("sleep 30")
        self.assertEqual((refused["ev"], refused["reason"]), ("bg-refused", "limit"))
        self.assertFalse(self.bg.request("bg-read", process="nope", after=0)["known"])

    def test_a_missing_program_is_refused(self) -> None:
        self.repl.send({"op": "exec", "id": "bgx", "background": True, "command": {"argv": ["no-such-program"], "cwd": self.repl.dir}, "timeoutMs": 1000, "maxOutputBytes": 10})
        refused = self.bg.expect(lambda f: f.get("id") == "bgx")
        self.assertEqual((refused["ev"], refused["reason"]), ("bg-refused", "spawn"))


if __name__ == "__main__":
    unittest.main()
