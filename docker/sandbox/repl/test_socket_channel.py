"""The host channel on a Unix socket (drydock_supervisor/socket_channel.py): the same
frames as on stdin/stdout, the channel's end ends the supervisor, and with two users the
socket is closed to user code."""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import tempfile
import unittest

from repl_test_support import SUPERVISOR, SYSTEM_PYTHON, Client

SANDBOX_UID = 61231
SUPERVISOR_UID = 61232


class TestSocketChannel(unittest.TestCase):
    def setUp(self) -> None:
        self.channel_dir = tempfile.mkdtemp(prefix="drydock-channel-")
        self.addCleanup(shutil.rmtree, self.channel_dir, True)
        self.path = os.path.join(self.channel_dir, "channel.sock")

    def test_frames_travel_on_the_socket(self) -> None:
        repl = Client(channel_socket=self.path)
        self.addCleanup(repl.close)
        self.assertEqual(repl.ready["ev"], "ready")
        done = repl.run("x = 41\nprint(x + 1)")
        self.assertEqual((done["status"], done["stdout"]), ("ok", "42\n"))
        # State lives on between runs, as over stdin/stdout.
        self.assertEqual(repl.run("print(x)")["stdout"], "41\n")
        repl.send({"op": "ping", "id": "p"})
        self.assertEqual(repl.next_frame(), {"ev": "pong", "id": "p"})

    def test_closing_the_socket_ends_the_supervisor(self) -> None:
        repl = Client(channel_socket=self.path)
        self.addCleanup(repl.close)
        assert repl.sock is not None
        # shutdown() ends the connection whatever still holds it (the reader thread).
        repl.sock.shutdown(socket.SHUT_RDWR)
        self.assertEqual(repl.proc.wait(timeout=10), 0)

    def test_nobody_connecting_ends_the_supervisor(self) -> None:
        env = dict(os.environ, DRYDOCK_CHANNEL_SOCKET=self.path, DRYDOCK_CHANNEL_ACCEPT_TIMEOUT_S="0.3")
        proc = subprocess.run([SYSTEM_PYTHON, SUPERVISOR], env=env, capture_output=True, timeout=20, check=False)
        self.assertEqual(proc.returncode, 1)
        self.assertIn(b"no host channel", proc.stderr)


@unittest.skipUnless(os.geteuid() == 0, "the supervisor drops root only when it starts as root")
class TestSocketChannelSeparated(unittest.TestCase):
    def setUp(self) -> None:
        # What the worker makes: a folder only the supervisor's user may enter.
        self.channel_dir = tempfile.mkdtemp(prefix="drydock-channel-")
        os.chown(self.channel_dir, SUPERVISOR_UID, SUPERVISOR_UID)
        os.chmod(self.channel_dir, 0o700)
        self.addCleanup(shutil.rmtree, self.channel_dir, True)
        self.path = os.path.join(self.channel_dir, "channel.sock")
        env = {"DRYDOCK_SANDBOX_UID": str(SANDBOX_UID), "DRYDOCK_SUPERVISOR_UID": str(SUPERVISOR_UID)}
        self.repl = Client(env, python=SYSTEM_PYTHON, sandbox_uid=SANDBOX_UID, channel_socket=self.path)
        self.addCleanup(self.repl.close)

    def test_the_socket_belongs_to_the_supervisor_and_is_closed_to_user_code(self) -> None:
        info = os.stat(self.path)
        self.assertEqual((info.st_uid, stat.S_IMODE(info.st_mode)), (SUPERVISOR_UID, 0o600))
        code = (
            "import json, os, socket\n"
            f"path = {self.path!r}\n"
            "tries = {}\n"
            "s = socket.socket(socket.AF_UNIX)\n"
            "try:\n    s.connect(path); tries['connect'] = 'ok'\n"
            "except OSError as e:\n    tries['connect'] = type(e).__name__\n"
            "for name, op in (('unlink', os.unlink), ('list', os.listdir)):\n"
            "    try:\n        op(path if name == 'unlink' else os.path.dirname(path)); tries[name] = 'ok'\n"
            "    except OSError as e:\n        tries[name] = type(e).__name__\n"
            "print(json.dumps(tries))"
        )
        done = self.repl.run(code)
        self.assertEqual(done["status"], "ok", done)
        self.assertEqual(
            json.loads(done["stdout"]),
            {"connect": "PermissionError", "unlink": "PermissionError", "list": "PermissionError"},
        )
        # The channel still works after the attempts.
        self.assertEqual(self.repl.run("print(1)")["stdout"], "1\n")


if __name__ == "__main__":
    unittest.main()
