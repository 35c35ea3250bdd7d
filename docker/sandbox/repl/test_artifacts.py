"""The listing of <session>/artifacts in every `done`."""

from __future__ import annotations

import os
import shutil
import tempfile
import textwrap
import unittest

from repl_test_support import Client, ReplTestCase, SYSTEM_PYTHON, NOBODY, EMPTY_ARTIFACTS


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


if __name__ == "__main__":
    unittest.main()
