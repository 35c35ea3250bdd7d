"""One exec from request to `done`: the cell handed to the kernel, its output and
result collected, the session dir's change report and the artifacts listing."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .artifacts import ensure_artifacts_dir, list_artifacts
from .capture import Capture
from .processes import read_cpu_usec, read_oom_kills
from .session_tree import (
    Snapshot,
    diff_snapshots,
    empty_change_report,
    take_snapshot,
    unchanged_report,
    wait_for_timestamp_tick,
)

if TYPE_CHECKING:
    from .kernel_control import KernelProc


@dataclass
class Exec:
    id: str
    code: str
    timeout_ms: float
    cap: int
    # Live (text for `stream` events as it arrives) unless the exec asked for
    # `"stream": false`: then the output goes out only in `done`.
    stdout: Capture
    stderr: Capture
    capture_figures: bool = True
    state_lost: bool = False
    started: float | None = None  # monotonic; None until sent to a ready kernel
    deadline: float = 0.0
    interrupted_at: float | None = None  # when SIGINT was sent (timeout or `interrupt`)
    cancelled: bool = False  # SIGINT came from the host's `interrupt`, not the time limit
    oom_before: int | None = None
    cpu_before: int | None = None  # the cgroup's CPU counter (µs) when the code was sent
    snapshot: Snapshot | None = None  # session dir before the cell (change report)
    # The host says it wrote nothing into the session dir since the last `done`.
    session_unchanged: bool = False
    # Files may have changed since `snapshot` was taken (events seen between execs).
    dirty: bool = True
    tracking_ms: float = 0.0  # time spent on the change report
    # A command (commands.py): the process to run instead of a cell; `code` is unused.
    command: dict[str, Any] | None = None



class ExecMixin:
    """Part of Supervisor (event_loop.py): the exec in progress."""

    def start_exec(self) -> None:
        cur, kernel = self.current, self.kernel
        assert cur is not None and kernel is not None and kernel.ready and cur.command is None
        cur.state_lost, self.state_lost = self.state_lost, False
        self.begin_tracking(cur)
        self.send_command(
            kernel,
            {
                "op": "exec",
                "id": cur.id,
                "code": cur.code,
                "maxOutputBytes": cur.cap,
                "captureFigures": cur.capture_figures,
            },
        )

    def begin_tracking(self, cur: Exec) -> None:
        """The run starts now: the session dir's "before", the counters, the deadline."""
        cur.oom_before = read_oom_kills(self.oom_counter)
        t0 = time.perf_counter()
        ensure_artifacts_dir(self.session_dir)
        moved = self.watch.drain()
        if cur.session_unchanged and self.last_snapshot is not None and self.watch.enabled:
            # What the last exec left: changes made since (by background processes of
            # the code) are reported by this exec.
            cur.snapshot, cur.dirty = self.last_snapshot, moved
        else:
            # The host may have written files: they are not the code's changes.
            cur.snapshot = self.walk()
            cur.dirty = False
        cur.tracking_ms = (time.perf_counter() - t0) * 1000.0
        cur.started = time.monotonic()
        cur.cpu_before = read_cpu_usec(self.cpu_counter)
        cur.deadline = cur.started + cur.timeout_ms / 1000.0

    def finish_exec(
        self,
        status: str,
        result: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
        result_truncated: bool = False,
        figures: list[str] | None = None,
        *,
        exit_code: int | None = None,
        signal_name: str | None = None,
    ) -> None:
        cur = self.current
        assert cur is not None
        self.current = None
        for name, capture in (("stdout", cur.stdout), ("stderr", cur.stderr)):
            tail = capture.finish()
            if tail:
                self.send({"ev": "stream", "id": cur.id, "name": name, "text": tail})
        started = cur.started if cur.started is not None else time.monotonic()
        duration_ms = round((time.monotonic() - started) * 1000.0, 3)
        cpu_after = read_cpu_usec(self.cpu_counter) if cur.cpu_before is not None else None
        cpu_ms = round((cpu_after - cur.cpu_before) / 1000.0, 3) if cpu_after is not None and cur.cpu_before is not None else None
        t0 = time.perf_counter()
        if cur.snapshot is None:
            files = empty_change_report()
        elif not cur.dirty and not self.watch.drain():
            files = unchanged_report(cur.snapshot)
            self.last_snapshot = cur.snapshot
        else:
            after = self.walk()
            files = diff_snapshots(cur.snapshot, after)
        cur.tracking_ms += (time.perf_counter() - t0) * 1000.0
        # Not a diff: everything in artifacts/ now, including what an earlier exec left.
        artifacts = list_artifacts(self.session_dir)
        extra: dict[str, Any] = {"exitCode": exit_code, "signal": signal_name} if cur.command is not None else {}
        self.send(
            {
                **extra,
                "ev": "done",
                "id": cur.id,
                "status": status,
                "stdout": cur.stdout.text(),
                "stderr": cur.stderr.text(),
                "truncated": cur.stdout.truncated or cur.stderr.truncated or result_truncated,
                "result": result,
                "error": error,
                "stateLost": cur.state_lost,
                "durationMs": duration_ms,
                "cpuMs": cpu_ms,
                "files": files,
                "artifacts": artifacts,
                "figures": figures or [],
                "trackingMs": round(cur.tracking_ms, 3),
            }
        )

    def walk(self) -> Snapshot:
        """A fresh snapshot, remembered for the next exec, with every directory watched.

        Waits for the timestamp tick after it, so that a later rewrite of any file gets
        a newer timestamp and the snapshot can serve as the next exec's "before".
        """
        self.watch.drain()  # events up to now are what this walk sees
        snapshot = take_snapshot(self.session_dir)
        self.watch.watch(snapshot.dirs)
        wait_for_timestamp_tick(snapshot.newest_ns)
        self.last_snapshot = snapshot
        return snapshot

    def on_output(self, name: str, data: bytes) -> None:
        cur = self.current
        if cur is None or cur.started is None or cur.command is not None:
            return  # written between execs, or during a command (background children): dropped
        text = (cur.stdout if name == "stdout" else cur.stderr).add(data)
        if text:
            self.send({"ev": "stream", "id": cur.id, "name": name, "text": text})

    def on_result(self, kernel: KernelProc, message: dict[str, Any]) -> None:
        cur = self.current
        assert cur is not None
        status = message.get("status")
        if status not in ("ok", "error"):
            self.kernel_lost(kernel, "garbage")
            return
        result = clean_result(message.get("result"))
        error = clean_error(message.get("error"))
        figures = clean_figures(message.get("figures"))
        # All output was written before the result frame: collect what is still in
        # the pipes so the stream events and `done` are complete and in order.
        self.drain_output(kernel)
        if cur.cancelled:
            # Stopped on the host's request: reported as the kernel ended it (usually a
            # KeyboardInterrupt), and, as after a timeout, what the cell started goes.
            self.finish_exec(status, result, error, bool(message.get("truncated")), figures)
            self.kill_strays(kernel)
            return
        if cur.interrupted_at is not None:
            # Interrupted in time: the kernel and its variables survive, but processes
            # the cell left behind (e.g. a fork bomb) must go.
            tb = error["traceback"] if error and error["name"] == "KeyboardInterrupt" else ""
            self.finish_exec("timeout", None, timeout_error(cur, tb), figures=figures)
            # After `done`: the reap command may find the kernel dead, and kernel_lost
            # must not see this exec as still running. Nothing else runs in between.
            self.kill_strays(kernel)
            return
        self.finish_exec(status, result, error, bool(message.get("truncated")), figures)


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def interrupted_error(value: str) -> dict[str, Any]:
    return {"name": "KeyboardInterrupt", "value": value, "traceback": ""}


def timeout_error(cur: Exec, traceback_text: str) -> dict[str, Any]:
    return {
        "name": "TimeoutError",
        "value": f"execution exceeded the time limit of {cur.timeout_ms:g} ms",
        "traceback": traceback_text,
    }


def clean_result(value: Any) -> dict[str, Any] | None:
    """{"text", "html"} of a value, plus "png" (base64) when there is one.

    A cell without a value that drew figures has a result of just {"png"}.
    """
    if not isinstance(value, dict):
        return None
    png = value.get("png")
    if isinstance(value.get("text"), str):
        html = value.get("html")
        out: dict[str, Any] = {"text": value["text"], "html": html if isinstance(html, str) else None}
        if isinstance(png, str):
            out["png"] = png
        return out
    return {"png": png} if isinstance(png, str) else None


def clean_figures(value: Any) -> list[str]:
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, str)]


def clean_error(value: Any) -> dict[str, Any] | None:
    if not isinstance(value, dict):
        return None
    return {
        key: value[key] if isinstance(value.get(key), str) else ""
        for key in ("name", "value", "traceback")
    }

