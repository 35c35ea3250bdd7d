"""The frames worker and supervisor exchange, fixed by the golden examples in frames/
(read by the TypeScript tests too: libs/execution/src/protocol/repl-protocol.golden.spec.ts).
Each request example is sent as is; each event example must have the shape of what the
supervisor answers: the same keys, and values of the same JSON types, all the way down
(an empty list conforms to any list example)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import unittest
from typing import Any

from drydock_supervisor.framing import FrameReader, encode_frame
from repl_test_support import HAVE_MATPLOTLIB, HERE, SYSTEM_PYTHON, Client, ReplTestCase
from test_separation import SANDBOX_UID, SUPERVISOR_UID

FRAMES = os.path.join(HERE, "frames")


def golden(kind: str, name: str) -> dict[str, Any]:
    with open(os.path.join(FRAMES, kind, f"{name}.json"), encoding="utf-8") as f:
        return json.load(f)


def json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if value is None:
        return "null"
    return type(value).__name__


def nonconformities(actual: Any, example: Any, where: str = "$") -> list[str]:
    """Where `actual` differs in shape from `example`: keys, JSON types, list items."""
    if isinstance(example, dict) and isinstance(actual, dict):
        if sorted(actual) != sorted(example):
            return [f"{where}: keys {sorted(actual)} != {sorted(example)}"]
        return [p for key in example for p in nonconformities(actual[key], example[key], f"{where}.{key}")]
    if isinstance(example, list) and isinstance(actual, list):
        if not example:
            return [] if not actual else [f"{where}: not empty"]
        return [p for i, item in enumerate(actual) for p in nonconformities(item, example[0], f"{where}[{i}]")]
    if json_type(actual) != json_type(example):
        return [f"{where}: {json_type(actual)} != {json_type(example)}"]
    return []


class GoldenAssertions(unittest.TestCase):
    def assertConforms(self, frame: dict[str, Any], name: str) -> None:
        self.assertEqual(nonconformities(frame, golden("events", name)), [], frame)


class TestGoldenFrames(ReplTestCase, GoldenAssertions):
    def test_every_example_round_trips_through_the_framing(self) -> None:
        for kind in ("requests", "events"):
            for name in sorted(os.listdir(os.path.join(FRAMES, kind))):
                message = golden(kind, name[: -len(".json")])
                self.assertEqual(list(FrameReader(1 << 20).feed(encode_frame(message))), [json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()])

    def test_the_shape_check_catches_a_missing_key_and_a_wrong_type(self) -> None:
        done = golden("events", "done-ok")
        self.assertTrue(nonconformities({k: v for k, v in done.items() if k != "trackingMs"}, done))
        self.assertTrue(nonconformities({**done, "files": {**done["files"], "changed": [1]}}, done))
        self.assertTrue(nonconformities({**done, "stateLost": 0}, done))

    def test_ready(self) -> None:
        self.assertConforms(self.repl.ready, "ready")
        self.assertEqual(self.repl.ready["features"], ["fs-read", "fs-write", "fs-list", "interrupt", "commands", "background", "terminals"])  # recycling needs the two users

    def test_ping(self) -> None:
        self.repl.send(golden("requests", "ping"))
        self.assertEqual(self.repl.next_frame(), golden("events", "pong"))

    def test_exec_ok_with_stream_result_files_and_artifacts(self) -> None:
        request = golden("requests", "exec")
        request["code"] = "open('out.csv', 'w').write('a')\nopen('artifacts/plot.png', 'wb').write(b'x')\n" + request["code"]
        self.repl.send(request)
        done, seen = self.repl.wait_done(request["id"])
        streams = [frame for _at, frame in seen if frame["ev"] == "stream"]
        self.assertTrue(streams)
        self.assertConforms(streams[0], "stream")
        self.assertConforms(done, "done-ok")
        self.assertEqual((done["stdout"], done["result"], done["files"]["changed"]), ("hi\n", {"text": "42", "html": None}, ["/out.csv"]))

    def test_exec_without_stream_events(self) -> None:
        request = {**golden("requests", "exec"), "id": "quiet", "stream": False, "code": "print('a')\nprint('b')\n6 * 7"}
        self.repl.send(request)
        done, seen = self.repl.wait_done("quiet")
        self.assertEqual([frame["ev"] for _at, frame in seen if frame["ev"] == "stream"], [])
        self.assertConforms(done, "done-ok")
        self.assertEqual(done["stdout"], "a\nb\n")

    def test_exec_error_and_timeout(self) -> None:
        self.assertConforms(self.repl.run("raise ValueError('bad')"), "done-error")
        self.assertConforms(self.repl.run("import time\ntime.sleep(5)", timeout_ms=200), "done-timeout")

    def test_command(self) -> None:
        request = golden("requests", "exec-command")
        command = {**request["command"], "cwd": self.repl.dir,
                   "argv": ["/bin/bash", "-c", "echo hi; tr a-z A-Z; echo n > notes.txt; echo report > artifacts/report.txt; exit 3"]}
        self.repl.send({**request, "command": command})
        done = self.repl.wait_done(request["id"])[0]
        self.assertConforms(done, "done-command")
        self.assertEqual((done["status"], done["exitCode"], done["stdout"]), ("error", 3, "hi\nPIPED\n"))
        self.repl.send({**request, "id": "exe_8", "command": {**command, "argv": ["sleep", "5"]}, "timeoutMs": 200})
        self.assertConforms(self.repl.wait_done("exe_8")[0], "done-command-timeout")

    def test_background(self) -> None:
        from test_background import BackgroundClient
        bg = BackgroundClient(self.repl)
        request = golden("requests", "exec-background")
        self.repl.send({**request, "command": {**request["command"], "cwd": self.repl.dir, "argv": ["/bin/bash", "-c", "echo serving; while read l; do echo \"GET $l\" >&2; done"]}})
        self.assertConforms(bg.expect(lambda f: f.get("id") == "exe_9"), "bg-started")
        self.repl.send(golden("requests", "bg-stdin"))
        self.assertConforms(bg.expect(lambda f: f.get("id") == "r2"), "bg-stdin-done")
        self.repl.send({**golden("requests", "bg-read"), "after": 1})
        bg.expect(lambda f: f.get("id") == "r1")
        self.repl.send({**golden("requests", "bg-stdin"), "id": "r4"})
        bg.expect(lambda f: f.get("id") == "r4")
        self.assertConforms(bg.expect(lambda f: f["ev"] == "bg-chunk"), "bg-chunk")
        self.repl.send(golden("requests", "bg-unwatch"))
        self.repl.send(golden("requests", "bg-signal"))
        self.assertConforms(bg.expect(lambda f: f.get("id") == "r3"), "bg-signalled")
        self.assertConforms(bg.expect(lambda f: f["ev"] == "bg-exit"), "bg-exit")
        self.repl.send({"op": "exec", "id": "exe_10", "background": True, "command": {"argv": ["true"], "cwd": self.repl.dir}})
        bg.expect(lambda f: f.get("ev") == "bg-exit" and f["process"] == "exe_10")
        self.repl.send({**golden("requests", "bg-read"), "process": "exe_10"})
        self.assertConforms(bg.expect(lambda f: f.get("id") == "r1"), "bg-output")

    def test_terminal(self) -> None:
        from test_background import BackgroundClient
        frames = BackgroundClient(self.repl)
        self.repl.send({**golden("requests", "pty-open"), "cwd": self.repl.dir})
        self.assertConforms(frames.expect(lambda f: f.get("id") == "pty_1" and f["ev"] == "pty-opened"), "pty-opened")
        self.repl.send(golden("requests", "pty-resize"))
        self.repl.send(golden("requests", "pty-input"))
        self.assertConforms(frames.expect(lambda f: f["ev"] == "pty-output"), "pty-output")
        for n in range(2, 5):
            self.repl.send({**golden("requests", "pty-open"), "id": f"pty_{n}", "cwd": self.repl.dir})
            frames.expect(lambda f, n=n: f.get("id") == f"pty_{n}" and f["ev"] == "pty-opened")
        self.repl.send({**golden("requests", "pty-open"), "id": "pty_5", "cwd": self.repl.dir})
        self.assertConforms(frames.expect(lambda f: f.get("id") == "pty_5"), "pty-refused")
        self.repl.send(golden("requests", "pty-close"))
        self.assertConforms(frames.expect(lambda f: f["ev"] == "pty-exit" and f["id"] == "pty_1"), "pty-exit")

    def test_interrupt(self) -> None:
        request = golden("requests", "interrupt")
        exec_id = self.repl.start("print('running', flush=True)\nwhile True: pass", timeout_ms=120_000)
        while self.repl.next_frame().get("ev") != "stream":
            pass
        self.repl.send({**request, "id": exec_id})
        done = self.repl.wait_done(exec_id)[0]
        self.assertConforms(done, "done-error")
        self.assertEqual(done["error"]["name"], "KeyboardInterrupt")

    def test_kernel_death_and_the_state_lost_after_it(self) -> None:
        killed = self.repl.run("import os\nprint('bye', flush=True)\nos._exit(3)")
        self.assertConforms(killed, "done-killed")
        self.assertEqual(killed["status"], "killed")
        after = self.repl.run("x = 1")
        self.assertConforms(after, "done-state-lost")
        self.assertTrue(after["stateLost"])

    def test_memory(self) -> None:
        counter = os.path.join(self.repl.dir, "memory.events")
        with open(counter, "w") as f:
            f.write("oom 1\noom_kill 1\n")
        repl = Client({"DRYDOCK_OOM_COUNTER_FILE": counter})
        self.addCleanup(repl.close)
        done = repl.run(f"open({counter!r}, 'w').write('oom 2\\noom_kill 2\\n')\nimport os, signal\nos.kill(os.getpid(), signal.SIGKILL)")
        self.assertEqual(done["status"], "memory")
        self.assertConforms(done, "done-memory")

    def test_rejected_exec_has_no_tracking_time(self) -> None:
        running = self.repl.start("import time\ntime.sleep(0.5)")
        self.repl.send({**golden("requests", "exec"), "id": "second"})
        rejected = self.repl.next_frame()
        self.assertEqual((rejected["id"], rejected["error"]["name"]), ("second", "Busy"))
        self.assertConforms(rejected, "done-rejected")
        self.assertEqual(self.repl.wait_done(running)[0]["status"], "ok")

    @unittest.skipUnless(HAVE_MATPLOTLIB, "matplotlib is not importable by this Python")
    def test_figure(self) -> None:
        done = self.repl.run("import matplotlib.pyplot as plt\nplt.plot([1, 2])\nNone")
        self.assertConforms(done, "done-figure")
        self.assertEqual(done["figures"], ["/artifacts/figure-1.png"])

    def test_fs_delete(self) -> None:
        os.makedirs(os.path.join(self.repl.dir, "data"))
        with open(os.path.join(self.repl.dir, "data", "old.csv"), "w") as f:
            f.write("x")
        self.repl.send(golden("requests", "fs-delete"))
        self.assertEqual(self.repl.next_frame(), golden("events", "fs-deleted"))

    def test_fs_read(self) -> None:
        os.makedirs(os.path.join(self.repl.dir, "artifacts"))
        with open(os.path.join(self.repl.dir, "artifacts", "report.csv"), "wb") as f:
            f.write(b"a,b\n")
        os.symlink("/etc/passwd", os.path.join(self.repl.dir, "artifacts", "link"))
        self.repl.send(golden("requests", "fs-read"))
        header = self.repl.next_frame()
        self.assertEqual(header.pop("_data"), b"a,b\n")  # the raw bytes after the frame
        self.assertEqual(header, golden("events", "fs-file"))
        self.assertEqual(self.repl.next_frame(), golden("events", "fs-file-end"))
        self.assertEqual(self.repl.next_frame(), golden("events", "fs-file-skipped"))

    def test_fs_write(self) -> None:
        request = golden("requests", "fs-write")
        os.makedirs(os.path.join(self.repl.dir, "data"))
        os.symlink("/etc", os.path.join(self.repl.dir, "data", "link"))
        contents = [b"a,b\n", b""]
        self.repl.send(request)
        self.repl.send_raw(b"".join(contents))
        self.assertEqual(self.repl.next_frame(), golden("events", "fs-written"))
        with open(os.path.join(self.repl.dir, "data", "in.csv"), "rb") as f:
            self.assertEqual(f.read(), b"a,b\n")
        self.assertEqual(os.stat(os.path.join(self.repl.dir, "data", "in.csv")).st_mtime_ns, request["files"][0]["mtimeMs"] * 1_000_000)
        self.assertFalse(os.path.exists("/etc/new.txt"))

    def test_recycle_refused_without_the_two_users(self) -> None:
        self.repl.send(golden("requests", "recycle"))
        frame = self.repl.next_frame()
        self.assertConforms(frame, "recycled-refused")
        self.assertEqual((frame["id"], frame["clean"]), (golden("requests", "recycle")["id"], False))

    def test_protocol_error(self) -> None:
        self.repl.send_raw(b"\x00\x00\x00\x02[]")
        self.assertEqual(self.repl.next_frame(), golden("events", "protocol-error"))

    def test_shutdown(self) -> None:
        self.repl.send(golden("requests", "shutdown"))
        self.assertEqual(self.repl.proc.wait(timeout=5), 0)


@unittest.skipUnless(os.geteuid() == 0, "the supervisor drops root only when it starts as root")
class TestGoldenFramesWithTwoUsers(GoldenAssertions):
    """As in a container: started as root, user code under another user (test_separation.py)."""

    def setUp(self) -> None:
        scratch = tempfile.mkdtemp(prefix="drydock-scratch-")
        os.chown(scratch, SANDBOX_UID, SANDBOX_UID)
        self.addCleanup(shutil.rmtree, scratch, True)
        env = {"DRYDOCK_SANDBOX_UID": str(SANDBOX_UID), "DRYDOCK_SUPERVISOR_UID": str(SUPERVISOR_UID), "DRYDOCK_SCRATCH_DIRS": scratch}
        self.repl = Client(env, python=SYSTEM_PYTHON, sandbox_uid=SANDBOX_UID)
        self.addCleanup(self.repl.close)

    def test_ready_and_recycled(self) -> None:
        self.assertConforms(self.repl.ready, "ready")
        self.assertEqual(self.repl.ready["features"], golden("events", "ready")["features"])
        self.repl.send(golden("requests", "recycle"))
        frame = self.repl.next_frame()
        self.assertConforms(frame, "recycled")
        self.assertTrue(frame["clean"], frame)


if __name__ == "__main__":
    unittest.main()
