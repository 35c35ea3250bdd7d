"""The frames worker and supervisor exchange, fixed by the golden examples in frames/
(read by the TypeScript tests too: libs/execution/src/protocol/repl-protocol.golden.spec.ts).
Each request example is sent as is; each event example must have the shape of what the
supervisor answers: the same keys, and values of the same JSON types, all the way down."""

from __future__ import annotations

import json
import os
import unittest
from typing import Any

from drydock_supervisor.framing import FrameReader, encode_frame
from repl_test_support import HERE, ReplTestCase

FRAMES = os.path.join(HERE, "frames")


def golden(kind: str, name: str) -> dict[str, Any]:
    with open(os.path.join(FRAMES, kind, f"{name}.json"), encoding="utf-8") as f:
        return json.load(f)


def shape(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [shape(value[0])] if value else []
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if value is None:
        return "null"
    return type(value).__name__


class TestGoldenFrames(ReplTestCase):
    def assertShape(self, frame: dict[str, Any], name: str) -> None:
        self.assertEqual(shape(frame), shape(golden("events", name)), frame)

    def test_every_example_round_trips_through_the_framing(self) -> None:
        for kind in ("requests", "events"):
            for name in sorted(os.listdir(os.path.join(FRAMES, kind))):
                message = golden(kind, name[: -len(".json")])
                self.assertEqual(FrameReader(1 << 20).feed(encode_frame(message)), [json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()])

    def test_ready(self) -> None:
        self.assertShape(self.repl.ready, "ready")

    def test_ping(self) -> None:
        self.repl.send(golden("requests", "ping"))
        self.assertShape(self.repl.next_frame(), "pong")

    def test_exec_ok_with_stream_result_files_and_artifacts(self) -> None:
        request = golden("requests", "exec")
        request["code"] = "open('out.csv', 'w').write('a')\nopen('artifacts/plot.png', 'wb').write(b'x')\n" + request["code"]
        self.repl.send(request)
        done, seen = self.repl.wait_done(request["id"])
        streams = [frame for _at, frame in seen if frame["ev"] == "stream"]
        self.assertTrue(streams)
        self.assertShape(streams[0], "stream")
        self.assertShape(done, "done-ok")

    def test_exec_error_and_timeout(self) -> None:
        self.assertShape(self.repl.run("raise ValueError('bad')"), "done-error")
        self.assertShape(self.repl.run("import time\ntime.sleep(5)", timeout_ms=200), "done-timeout")

    def test_fs_delete(self) -> None:
        os.makedirs(os.path.join(self.repl.dir, "data"))
        with open(os.path.join(self.repl.dir, "data", "old.csv"), "w") as f:
            f.write("x")
        self.repl.send(golden("requests", "fs-delete"))
        frame = self.repl.next_frame()
        self.assertShape(frame, "fs-deleted")
        self.assertEqual(frame, golden("events", "fs-deleted"))

    def test_protocol_error(self) -> None:
        self.repl.send_raw(b"\x00\x00\x00\x02[]")
        self.assertShape(self.repl.next_frame(), "protocol-error")

    def test_shutdown(self) -> None:
        self.repl.send(golden("requests", "shutdown"))
        self.assertEqual(self.repl.proc.wait(timeout=5), 0)


if __name__ == "__main__":
    unittest.main()
