"""The `checkpoint` request (drydock_supervisor/checkpoint.py): between execs the
supervisor lets go of the host channel, waits for the resume file, then takes a new
connection and says `ready` again with everything as it was; while an exec runs, or on
the stdin/stdout channel, it refuses."""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
import unittest

from repl_test_support import Client, connect_when_listening


class TestCheckpoint(unittest.TestCase):
    def setUp(self) -> None:
        self.channel_dir = tempfile.mkdtemp(prefix="drydock-channel-")
        self.addCleanup(shutil.rmtree, self.channel_dir, True)
        self.path = os.path.join(self.channel_dir, "channel.sock")

    def reconnect(self, repl: Client) -> dict:
        """What the worker does after a restore (or a failed checkpoint): the resume file,
        then a new connection on the socket."""
        old = repl.sock
        assert old is not None
        old.close()
        sock = connect_when_listening(self.path, repl.proc)
        repl.sock = sock
        repl.channel_in = sock.makefile("wb")
        repl.channel_out = sock.makefile("rb")
        threading.Thread(target=repl._reader, daemon=True).start()
        return repl.next_frame()

    def test_lets_go_of_the_channel_and_resumes_with_its_state(self) -> None:
        repl = Client(channel_socket=self.path)
        self.addCleanup(repl.close)
        self.assertIn("checkpoint", repl.ready["features"])
        self.assertEqual(repl.run("x = 41")["status"], "ok")
        repl.send({"op": "checkpoint", "id": "c1"})
        self.assertEqual(repl.next_frame(), {"ev": "checkpoint-ready", "id": "c1"})
        # Its end of the channel is closed: the host's reader sees the end.
        self.assertIsNone(repl.frames.get(timeout=15)[1])
        # Without the resume file it waits, and listens on nothing.
        time.sleep(0.2)
        self.assertIsNone(repl.proc.poll())
        self.assertFalse(os.path.exists(self.path) and _accepts(self.path))
        open(os.path.join(self.channel_dir, "resume"), "w").close()
        ready = self.reconnect(repl)
        self.assertEqual((ready["ev"], ready.get("resumed")), ("ready", True))
        self.assertFalse(os.path.exists(os.path.join(self.channel_dir, "resume")))
        done = repl.run("print(x + 1)")
        self.assertEqual((done["status"], done["stdout"], done["stateLost"]), ("ok", "42\n", False))

    def test_refuses_while_an_exec_runs(self) -> None:
        repl = Client(channel_socket=self.path)
        self.addCleanup(repl.close)
        repl.send({"op": "exec", "id": "e1", "code": "import time; time.sleep(1)", "timeoutMs": 10000})
        time.sleep(0.2)
        repl.send({"op": "checkpoint", "id": "c1"})
        frames = [repl.next_frame(), repl.next_frame()]
        refused = next(f for f in frames if f.get("ev") == "checkpoint-refused")
        self.assertEqual(refused, {"ev": "checkpoint-refused", "id": "c1", "reason": "an exec is running"})
        self.assertTrue(any(f.get("ev") == "done" and f["status"] == "ok" for f in frames))

    def test_refuses_on_the_stdin_channel(self) -> None:
        repl = Client()
        self.addCleanup(repl.close)
        self.assertNotIn("checkpoint", repl.ready["features"])
        repl.send({"op": "checkpoint", "id": "c1"})
        self.assertEqual(repl.next_frame(), {"ev": "checkpoint-refused", "id": "c1", "reason": "a checkpoint needs the socket channel"})


class TestFsList(unittest.TestCase):
    def test_lists_every_file_of_the_session_as_changed_and_links_as_skipped(self) -> None:
        repl = Client()
        self.addCleanup(repl.close)
        code = (
            "import os\nos.makedirs('sub/deeper')\nopen('a.txt', 'w').write('a')\nopen('sub/deeper/b.csv', 'w').write('b')\n"
            "os.symlink('/etc/passwd', 'link')\nos.makedirs('artifacts', exist_ok=True)\nopen('artifacts/out.png', 'w').write('p')"
        )
        self.assertEqual(repl.run(code)["status"], "ok")
        repl.send({"op": "fs-list", "id": "l1"})
        listed = repl.next_frame()
        self.assertEqual(listed["ev"], "fs-listed")
        self.assertEqual(listed["files"]["changed"], ["/a.txt", "/sub/deeper/b.csv"])
        self.assertEqual(listed["files"]["deleted"], [])
        self.assertEqual(listed["files"]["skipped"], [{"path": "/link", "reason": "symlink"}])


def _accepts(path: str) -> bool:
    import socket

    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(path)
        return True
    except OSError:
        return False
    finally:
        s.close()


if __name__ == "__main__":
    unittest.main()
