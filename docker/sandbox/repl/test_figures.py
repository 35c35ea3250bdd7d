"""Automatic capture of open matplotlib figures after each cell."""

from __future__ import annotations

import base64
import os
import shutil
import tempfile
import textwrap
import unittest

from repl_test_support import ReplTestCase, HAVE_MATPLOTLIB, PNG_MAGIC


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
