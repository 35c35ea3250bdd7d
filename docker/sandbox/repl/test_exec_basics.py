"""Exec basics: the ready and done frames, the persistent namespace, output, results and errors."""

from __future__ import annotations

import os
import sys
import textwrap
import unittest

from repl_test_support import ReplTestCase, EMPTY_ARTIFACTS


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
                "stateLost", "durationMs", "cpuMs", "files", "artifacts", "figures", "trackingMs",
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


    def test_cpu_time_of_the_run_from_the_cgroup_counter(self) -> None:
        busy = self.repl.run("x = 0\nfor i in range(3_000_000):\n    x += i\nx")
        self.assertEqual(busy["status"], "ok")
        # The counter is the cgroup's (the container's in production; here, whatever
        # cgroup the test runs in): at least the busy loop's own CPU time.
        self.assertIsInstance(busy["cpuMs"], float)
        self.assertGreaterEqual(busy["cpuMs"], 0.5 * busy["durationMs"])


if __name__ == "__main__":
    unittest.main()
