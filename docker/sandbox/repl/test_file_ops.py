"""fs-read and fs-delete's walk to a path's folder, called directly (no REPL)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import unittest

from drydock_supervisor.file_ops import delete_session_path, open_session_file

from repl_test_support import NOBODY


def as_sandbox_user(fn):
    """fn() as an unprivileged user (root reads anything): in a child when root. Its
    answer comes back as JSON."""
    if os.geteuid() != 0:
        return fn()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read_end)
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            os.write(write_end, json.dumps(fn()).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as f:
        answer = f.read()
    os.waitpid(pid, 0)
    return json.loads(answer)


class TestFolderOnTheWay(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = tempfile.mkdtemp()
        os.chmod(self.dir, 0o755)
        self.addCleanup(shutil.rmtree, self.dir)
        os.makedirs(os.path.join(self.dir, "locked", "inner"))
        with open(os.path.join(self.dir, "locked", "inner", "x.txt"), "w") as f:
            f.write("x")
        # Readable but not searchable: the folder opens, nothing below it can be looked
        # up, not even with lstat.
        os.chmod(os.path.join(self.dir, "locked"), 0o644)
        self.addCleanup(os.chmod, os.path.join(self.dir, "locked"), 0o755)

    def call(self, op, *args):
        def run():
            root_fd = os.open(self.dir, os.O_RDONLY | os.O_DIRECTORY)
            try:
                answer = op(root_fd, *args)
                if isinstance(answer, tuple):  # (fd, size): opened
                    os.close(answer[0])
                    return ["opened", answer[1]]
                return answer
            finally:
                os.close(root_fd)

        return as_sandbox_user(run)

    def test_read_below_a_folder_it_cannot_search_is_unreadable(self) -> None:
        self.assertEqual(self.call(open_session_file, ["locked", "inner", "x.txt"], 1024), "unreadable")

    def test_delete_below_a_folder_it_cannot_search_is_an_error(self) -> None:
        self.assertEqual(self.call(delete_session_path, ["locked", "inner", "x.txt"]), "error")

    def test_read_of_a_reachable_file(self) -> None:
        os.chmod(os.path.join(self.dir, "locked"), 0o755)
        self.assertEqual(self.call(open_session_file, ["locked", "inner", "x.txt"], 1024), ["opened", 1])


if __name__ == "__main__":
    unittest.main()
