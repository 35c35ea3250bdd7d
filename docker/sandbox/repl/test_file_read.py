"""fs-read: regular files sent to the host as raw bytes after an fs-file frame, and
everything else refused without being followed or opened."""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Any

from repl_test_support import Client, ReplTestCase


class FileReadMixin:
    repl: Client

    def put(self, rel: str, data: bytes) -> str:
        path = os.path.join(self.repl.dir, rel.lstrip("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
        return path

    def fs_read(self, paths: list[Any], max_bytes: int = 1 << 30, request_id: str = "r1") -> list[dict[str, Any]]:
        """The answers to one fs-read: one per path, each file's bytes in `_data`."""
        self.repl.send({"op": "fs-read", "id": request_id, "paths": paths, "maxBytes": max_bytes})
        answers: list[dict[str, Any]] = []
        while len(answers) < len(paths):
            frame = self.repl.next_frame()
            assert frame["ev"] == "fs-file" and frame["id"] == request_id, frame
            if "size" in frame:
                end = self.repl.next_frame()
                assert (end["ev"], end["id"], end["path"]) == ("fs-file-end", request_id, frame["path"]), end
                frame["complete"] = end["complete"]
            answers.append(frame)
        return answers


class TestFileRead(FileReadMixin, ReplTestCase):
    def test_regular_files_in_order_with_their_bytes(self) -> None:
        big = os.urandom(3 * 1024 * 1024 + 17)  # more than the channel's buffers hold
        self.put("artifacts/big.bin", big)
        self.put("artifacts/sub/empty.txt", b"")
        self.put("notes.txt", "héllo\n".encode())
        answers = self.fs_read(["/artifacts/big.bin", "/artifacts/sub/empty.txt", "/notes.txt"])
        self.assertEqual([a["path"] for a in answers], ["/artifacts/big.bin", "/artifacts/sub/empty.txt", "/notes.txt"])
        self.assertEqual([a["size"] for a in answers], [len(big), 0, len("héllo\n".encode())])
        self.assertEqual(answers[0]["_data"], big)
        self.assertEqual(answers[1]["_data"], b"")
        self.assertEqual(answers[2]["_data"], "héllo\n".encode())
        self.assertTrue(all(a["complete"] for a in answers))
        # The channel is in step afterwards: the next request is answered as usual.
        self.assertEqual(self.repl.run("1 + 1")["result"]["text"], "2")

    def test_nothing_but_a_regular_file_is_read(self) -> None:
        secret = tempfile.mkdtemp(prefix="drydock-outside-")
        self.addCleanup(shutil.rmtree, secret, ignore_errors=True)
        with open(os.path.join(secret, "key"), "w") as f:
            f.write("host secret")
        art = os.path.join(self.repl.dir, "artifacts")
        os.makedirs(os.path.join(art, "dir"))
        os.symlink(os.path.join(secret, "key"), os.path.join(art, "link"))
        os.symlink(secret, os.path.join(art, "linkdir"))
        os.mkfifo(os.path.join(art, "pipe"))  # opening it would wait for a writer
        self.put("artifacts/a.txt", b"a")
        os.link(os.path.join(art, "a.txt"), os.path.join(art, "b.txt"))
        answers = self.fs_read(
            [
                "/artifacts/link",
                "/artifacts/linkdir/key",
                "/artifacts/pipe",
                "/artifacts/dir",
                "/artifacts/a.txt",
                "/artifacts/gone.txt",
                "/artifacts/gone/deeper.txt",
                "/../etc/passwd",
                "relative.txt",
                42,
            ]
        )
        self.assertEqual(
            [a.get("skipped") for a in answers],
            ["symlink", "symlink", "fifo", "directory", "hardlink", "vanished", "vanished", "invalid-path", "invalid-path", "invalid-path"],
        )
        self.assertFalse(any("size" in a for a in answers))

    def test_a_file_over_max_bytes_is_refused_unread(self) -> None:
        self.put("artifacts/big.bin", b"x" * 101)
        self.put("artifacts/fits.bin", b"y" * 100)
        answers = self.fs_read(["/artifacts/big.bin", "/artifacts/fits.bin"], max_bytes=100)
        self.assertEqual(answers[0].get("skipped"), "too-large")
        self.assertEqual(answers[1]["_data"], b"y" * 100)

    def test_bad_request_is_a_protocol_error(self) -> None:
        for message in (
            {"op": "fs-read", "id": "r", "paths": "/a.txt", "maxBytes": 1},
            {"op": "fs-read", "id": "r", "paths": ["/a.txt"]},
            {"op": "fs-read", "id": "r", "paths": ["/a.txt"], "maxBytes": -1},
            {"op": "fs-read", "paths": ["/a.txt"], "maxBytes": 1},
        ):
            self.repl.send(message)
            frame = self.repl.next_frame()
            self.assertEqual(frame["ev"], "protocol_error", frame)

    def test_a_file_written_by_code_in_the_background_is_sent_whole_or_marked(self) -> None:
        # A background thread keeps rewriting the file while it is sent: every answer is
        # either complete with the announced bytes or marked incomplete (never a
        # silently short or long body, which would desynchronise the channel).
        self.assertEqual(
            self.repl.run(
                "import threading, os\n"
                "stop = False\n"
                "def churn():\n"
                "    while not stop:\n"
                "        with open('artifacts/churn.bin', 'wb') as f: f.write(os.urandom(256 * 1024))\n"
                "        with open('artifacts/churn.bin', 'wb') as f: f.write(b'x' * 1000)\n"
                "os.makedirs('artifacts', exist_ok=True)\n"
                "t = threading.Thread(target=churn, daemon=True); t.start()\n"
            )["status"],
            "ok",
        )
        for i in range(20):
            answer = self.fs_read(["/artifacts/churn.bin"], request_id=f"c{i}")[0]
            if "size" in answer:
                self.assertEqual(len(answer["_data"]), answer["size"])
        self.assertEqual(self.repl.run("stop = True; t.join(); 'stopped'")["result"]["text"], "'stopped'")


class TestFileReadOverSocket(FileReadMixin, ReplTestCase):
    """The same bytes over the Unix-socket host channel (sendfile onto a socket)."""

    def setUp(self) -> None:
        self.sock_dir = tempfile.mkdtemp(prefix="drydock-channel-")
        self.addCleanup(shutil.rmtree, self.sock_dir, ignore_errors=True)
        self.repl = Client(channel_socket=os.path.join(self.sock_dir, "channel.sock"))
        self.addCleanup(self.repl.close)

    def test_large_file_and_then_an_exec(self) -> None:
        data = os.urandom(8 * 1024 * 1024 + 3)
        self.put("artifacts/out.bin", data)
        answers = self.fs_read(["/artifacts/out.bin", "/artifacts/none"])
        self.assertEqual(answers[0]["_data"], data)
        self.assertTrue(answers[0]["complete"])
        self.assertEqual(answers[1].get("skipped"), "vanished")
        self.assertEqual(self.repl.run("'after'")["result"]["text"], "'after'")
