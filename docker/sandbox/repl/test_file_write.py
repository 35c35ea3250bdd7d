"""fs-write: files put below the session dir by the host, through a real supervisor. A
link planted or swapped in by code at any point is refused, never followed."""

from __future__ import annotations

import ctypes
import os
import tempfile
import threading
import unittest
from typing import Any

from repl_test_support import Client, ReplTestCase

MTIME_MS = 1_764_547_200_000
RENAME_EXCHANGE = 2
AT_FDCWD = -100


def push(repl: Client, files: list[tuple[str, bytes]], request_id: str = "w") -> dict[str, Any]:
    specs = [{"path": path, "size": len(data), "mtimeMs": MTIME_MS} for path, data in files]
    repl.send({"op": "fs-write", "id": request_id, "files": specs})
    repl.send_raw(b"".join(data for _path, data in files))
    while True:
        frame = repl.next_frame()
        if frame.get("ev") == "fs-written" and frame.get("id") == request_id:
            return frame


class TestFsWrite(ReplTestCase):
    def read(self, rel: str) -> bytes:
        with open(os.path.join(self.repl.dir, rel), "rb") as f:
            return f.read()

    def test_files_land_with_their_folders_mode_and_mtime(self) -> None:
        answer = push(self.repl, [("/a/b/c.txt", b"deep"), ("/top.bin", bytes(range(256)) * 4096), ("/empty", b"")])
        self.assertEqual((answer["written"], answer["refused"]), (3, []))
        self.assertEqual(self.read("a/b/c.txt"), b"deep")
        self.assertEqual(self.read("top.bin"), bytes(range(256)) * 4096)
        self.assertEqual(self.read("empty"), b"")
        st = os.stat(os.path.join(self.repl.dir, "a/b/c.txt"))
        self.assertEqual((st.st_mode & 0o777, st.st_mtime_ns), (0o644, MTIME_MS * 1_000_000))
        self.assertEqual(os.stat(os.path.join(self.repl.dir, "a")).st_mode & 0o777, 0o755)
        # No temporary name is left behind.
        self.assertEqual(sorted(os.listdir(self.repl.dir)), ["a", "empty", "top.bin"])

    def test_the_next_exec_sees_them_and_the_channel_stays_in_step(self) -> None:
        push(self.repl, [("/x.py", b"VALUE = 41\n")])
        done = self.repl.run("exec(open('x.py').read())\nVALUE + 1")
        self.assertEqual(done["result"]["text"], "42")

    def test_an_entry_planted_at_the_target_is_replaced_not_written_through(self) -> None:
        outside = tempfile.mkdtemp()
        victim = os.path.join(outside, "victim")
        with open(victim, "wb") as f:
            f.write(b"keep")
        os.symlink(victim, os.path.join(self.repl.dir, "link"))
        os.link(victim, os.path.join(self.repl.dir, "hard"))
        answer = push(self.repl, [("/link", b"new"), ("/hard", b"new")])
        self.assertEqual((answer["written"], answer["refused"]), (2, []))
        self.assertEqual(self.read("link"), b"new")
        self.assertFalse(os.path.islink(os.path.join(self.repl.dir, "link")))
        with open(victim, "rb") as f:
            self.assertEqual(f.read(), b"keep")

    def test_links_folders_and_files_in_the_way_are_refused_by_name(self) -> None:
        outside = tempfile.mkdtemp()
        os.symlink(outside, os.path.join(self.repl.dir, "dirlink"))
        os.makedirs(os.path.join(self.repl.dir, "folder", "inner"))
        with open(os.path.join(self.repl.dir, "plain"), "w") as f:
            f.write("x")
        answer = push(
            self.repl,
            [("/dirlink/f", b"1"), ("/folder", b"2"), ("/plain/f", b"3"), ("/../escape", b"4"), ("/ok", b"5")],
        )
        self.assertEqual(answer["written"], 1)
        self.assertEqual(
            {r["path"]: r["reason"] for r in answer["refused"]},
            {"/dirlink/f": "symlink", "/folder": "directory", "/plain/f": "not-a-directory", "/../escape": "invalid"},
        )
        self.assertEqual(os.listdir(outside), [])
        self.assertEqual(self.read("ok"), b"5")

    def test_a_folder_swapped_for_a_link_while_pushing_never_lets_a_file_out(self) -> None:
        # What hostile code does (CVE-2018-15664): swaps a folder and a symlink to another
        # path with renameat2(RENAME_EXCHANGE), over and over, while the host writes into it.
        outside = tempfile.mkdtemp()
        target = os.path.join(self.repl.dir, "spot")
        swap = os.path.join(self.repl.dir, "spot-link")
        os.mkdir(target)
        os.symlink(outside, swap)
        libc = ctypes.CDLL(None, use_errno=True)
        stop = threading.Event()
        swaps = [0]

        def swapper() -> None:
            while not stop.is_set():
                if libc.renameat2(AT_FDCWD, target.encode(), AT_FDCWD, swap.encode(), RENAME_EXCHANGE) == 0:
                    swaps[0] += 1

        thread = threading.Thread(target=swapper, daemon=True)
        thread.start()
        written = refused = 0
        try:
            for round_ in range(200):
                answer = push(self.repl, [(f"/spot/f{round_}-{i}", b"x") for i in range(20)], request_id=f"r{round_}")
                written += answer["written"]
                refused += len(answer["refused"])
                self.assertEqual({r["reason"] for r in answer["refused"]} - {"symlink", "not-a-directory"}, set())
        finally:
            stop.set()
            thread.join()
        self.assertGreater(swaps[0], 1000)
        self.assertGreater(refused, 0)  # the race was met
        self.assertEqual(os.listdir(outside), [])
        self.assertEqual(written + refused, 200 * 20)


if __name__ == "__main__":
    unittest.main()
