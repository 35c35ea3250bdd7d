"""The change report of the session dir in `done`, and fs-delete."""

from __future__ import annotations

import os
import shutil
import tempfile
import textwrap
import time
import unittest
from typing import Any

from repl_test_support import ReplTestCase, EMPTY_ARTIFACTS


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


if __name__ == "__main__":
    unittest.main()
