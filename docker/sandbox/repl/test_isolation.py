"""What user code cannot do to the channel or the supervisor, and how the kernel's death is handled."""

from __future__ import annotations

import os
import unittest

from repl_test_support import Client, ReplTestCase, SYSTEM_PYTHON, NOBODY


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


if __name__ == "__main__":
    unittest.main()
