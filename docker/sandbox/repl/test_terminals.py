"""Terminals (terminals.py): a login shell on a pty beside the REPL: typed bytes in,
what it shows out, a resize it sees, its exit code; a limit; hanging up ends it."""

from __future__ import annotations

import base64
import os
import time
import unittest
from typing import Any

from repl_test_support import Client, ReplTestCase, SYSTEM_PYTHON
from test_background import BackgroundClient
from test_separation import SANDBOX_UID, SUPERVISOR_UID


class TerminalMixinTests:
    repl: Client

    def setUp(self) -> None:  # type: ignore[misc]
        super().setUp()  # type: ignore[misc]
        self.frames = BackgroundClient(self.repl)
        self.shown: dict[str, bytes] = {}

    def open(self, term_id: str = "t1", cols: int = 80, rows: int = 24) -> dict[str, Any]:
        self.repl.send({"op": "pty-open", "id": term_id, "cols": cols, "rows": rows, "cwd": self.repl.dir})
        return self.frames.expect(lambda f: f.get("id") == term_id and f["ev"] in ("pty-opened", "pty-refused"))

    def type(self, text: str, term_id: str = "t1") -> None:
        self.repl.send({"op": "pty-input", "id": term_id, "data64": base64.b64encode(text.encode()).decode()})

    def until(self, needle: bytes, term_id: str = "t1", timeout: float = 10.0) -> bytes:
        deadline = time.monotonic() + timeout
        while needle not in self.shown.get(term_id, b""):
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"{needle!r} not shown; got {self.shown.get(term_id, b'')!r}")
            frame = self.frames.expect(lambda f: f["ev"] == "pty-output" and f["id"] == term_id, timeout=left)
            self.shown[term_id] = self.shown.get(term_id, b"") + base64.b64decode(frame["data64"])
        return self.shown[term_id]

    def test_echo_resize_and_exit_code(self) -> None:
        opened = self.open()
        self.assertEqual(opened["ev"], "pty-opened", opened)
        self.type("echo hi-$((40+2))\r")
        self.until(b"hi-42")
        self.repl.send({"op": "pty-resize", "id": "t1", "cols": 100, "rows": 40})
        self.type("stty size\r")
        self.until(b"40 100")
        self.type("tty; echo $HOME\r")
        shown = self.until(b"/dev/pts/")
        self.assertNotIn(b"not a tty", shown)
        self.type("exit 3\r")
        exit_frame = self.frames.expect(lambda f: f["ev"] == "pty-exit" and f["id"] == "t1")
        self.assertEqual((exit_frame["exitCode"], exit_frame["signal"]), (3, None))

    def test_job_control_and_ctrl_c(self) -> None:
        self.open()
        self.type("sleep 30\r")
        time.sleep(0.5)
        self.type("\x03")  # ^C reaches the foreground job through the terminal
        self.type("echo after-$?\r")
        self.until(b"after-130")

    def test_hang_up_and_limit(self) -> None:
        for n in range(4):
            self.assertEqual(self.open(f"t{n}")["ev"], "pty-opened")
        refused = self.open("t9")
        self.assertEqual((refused["ev"], refused["reason"]), ("pty-refused", "limit"))
        self.repl.send({"op": "pty-close", "id": "t0"})
        exit_frame = self.frames.expect(lambda f: f["ev"] == "pty-exit" and f["id"] == "t0")
        self.assertEqual(exit_frame["signal"], "SIGHUP")
        self.assertEqual(self.open("t5")["ev"], "pty-opened")
        # The REPL answers beside them.
        self.assertEqual(self.repl.run("1 + 1")["result"]["text"], "2")

    def test_force_close_ends_a_shell_that_ignores_the_hang_up(self) -> None:
        self.open()
        self.type("trap '' HUP; echo trapped-$((1+1))\r")
        self.until(b"trapped-2")
        self.repl.send({"op": "pty-close", "id": "t1"})
        with self.assertRaises(AssertionError):  # still there after a hang-up
            self.frames.expect(lambda f: f["ev"] == "pty-exit" and f["id"] == "t1", timeout=1.0)
        self.repl.send({"op": "pty-close", "id": "t1", "force": True})
        exit_frame = self.frames.expect(lambda f: f["ev"] == "pty-exit" and f["id"] == "t1")
        self.assertEqual(exit_frame["signal"], "SIGKILL")


class TestTerminals(TerminalMixinTests, ReplTestCase):
    pass


@unittest.skipUnless(os.geteuid() == 0, "the sandbox user exists only when the supervisor starts as root")
class TestTerminalsAsSandboxUser(TerminalMixinTests, unittest.TestCase):
    def setUp(self) -> None:
        env = {"DRYDOCK_SANDBOX_UID": str(SANDBOX_UID), "DRYDOCK_SUPERVISOR_UID": str(SUPERVISOR_UID)}
        self.repl = Client(env, python=SYSTEM_PYTHON, sandbox_uid=SANDBOX_UID)
        self.addCleanup(self.repl.close)
        super().setUp()

    def test_the_shell_is_the_sandbox_user(self) -> None:
        self.open()
        self.type("id -u; ps -o uid= -p $$\r")
        shown = self.until(f"{SANDBOX_UID}\r\n".encode())
        self.assertIn(str(SANDBOX_UID).encode(), shown)


if __name__ == "__main__":
    unittest.main()
