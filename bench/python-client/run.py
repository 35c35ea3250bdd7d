"""bench/python-client: what the Python SDK (packages/python) costs.

1. SDK overhead per run(): interleaved samples of ``session.run("pass")`` through the SDK
   and of the same request made with a raw ``http.client`` keep-alive connection (JSON
   encoded and decoded, TCP_NODELAY as the SDK sets it), in one process against one
   session of the real platform; the figure is the difference of the medians. The same
   pair against a canned local answer (no sandbox, no gateway) isolates the SDK's own CPU
   from the platform's jitter.
2. batches.submit of items from a generator: peak RSS of a process that submits 10,000
   and one that submits 100,000 (each a fresh interpreter; the batch is cancelled at
   once so the items never run). Constant memory means the two peaks are the same; a
   control submits the 100,000 as a list built first, to show what that would cost.

    bash bench/python-client/run.sh [--n 400] [--items 10000,100000] [--url URL --admin-key KEY]

Figures only: nothing here asserts on timing. A wrong answer from the platform fails it.
"""

from __future__ import annotations

import argparse
import http.client
import http.server
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "packages" / "python" / "tests"))
if "drydock" not in sys.modules:
    try:
        import drydock  # noqa: F401  (an installed wheel)
    except ImportError:
        sys.path.insert(0, str(ROOT / "packages" / "python" / "src"))

import harness  # noqa: E402
from drydock import Drydock  # noqa: E402
from drydock.client import Session  # noqa: E402
from drydock.types import SessionInfo  # noqa: E402


def percentile(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[max(0, min(len(ordered) - 1, int(round(p / 100 * len(ordered) + 0.5)) - 1))]


def interleaved(n: int, calls: dict[str, Callable[[], None]], warmup: int = 30) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Wall-clock and this process's CPU time per call, in ms, the calls alternating
    (ABBA) so that drift in the platform's speed touches both alike."""
    names = list(calls)
    for i in range(warmup):
        calls[names[i % 2]]()
    wall: dict[str, list[float]] = {name: [] for name in names}
    cpu: dict[str, list[float]] = {name: [] for name in names}
    for i in range(n):
        order = names if i % 2 == 0 else names[::-1]
        for name in order:
            started, started_cpu = time.perf_counter(), time.process_time()
            calls[name]()
            cpu[name].append((time.process_time() - started_cpu) * 1000)
            wall[name].append((time.perf_counter() - started) * 1000)
    return wall, cpu


def report(title: str, measured: tuple[dict[str, list[float]], dict[str, list[float]]], baseline: str, sdk: str) -> float:
    wall, cpu = measured
    print(title)
    print(f"  {'call':40} {'p50 ms':>8} {'p90 ms':>8} {'p99 ms':>8} {'mean ms':>8} {'client CPU p50 ms':>18}")
    for name, values in wall.items():
        print(
            f"  {name:40} {percentile(values, 50):8.3f} {percentile(values, 90):8.3f} {percentile(values, 99):8.3f}"
            f" {statistics.fmean(values):8.3f} {percentile(cpu[name], 50):18.3f}"
        )
    paired = [s - b for s, b in zip(wall[sdk], wall[baseline])]
    print(f"  median of the paired differences (each SDK call next to a raw one): {statistics.median(paired):.3f} ms")
    print(f"  client CPU per call, SDK minus raw, at p50: {percentile(cpu[sdk], 50) - percentile(cpu[baseline], 50):.3f} ms")
    return percentile(wall[sdk], 50) - percentile(wall[baseline], 50)


def raw_call(url: str, key: str, path: str) -> Callable[[], None]:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port)
    conn.connect()
    conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json", "Accept": "application/json"}

    def call() -> None:
        conn.request("POST", path, body=json.dumps({"code": "pass"}).encode(), headers=headers)
        answer = conn.getresponse()
        record = json.loads(answer.read())
        if answer.status != 200 or record.get("status") != "ok":
            raise SystemExit(f"raw run: HTTP {answer.status} {record}")

    return call


def sdk_call(session: Session) -> Callable[[], None]:
    def call() -> None:
        run = session.run("pass")
        if run.status != "ok":
            raise SystemExit(f"sdk run: {run}")

    return call


# A canned execution record, as the gateway answers run("pass").
_RECORD = json.dumps(
    {
        "id": "exe_canned", "sessionId": "ses_canned", "threadId": "t", "kind": "python", "status": "ok", "stdout": "",
        "stderr": "", "truncated": False, "result": None, "error": None, "stateLost": False,
        "files": {"changed": [], "deleted": [], "skipped": [], "truncated": False}, "artifacts": [], "artifactsSkipped": [],
        "codeSha256": "0" * 64, "idempotencyKey": None, "durationMs": 1, "cpuMs": 0.5,
        "createdAt": "2026-01-01T00:00:00.000Z", "finishedAt": "2026-01-01T00:00:00.001Z",
    }
).encode()


_ANSWER = b"HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: %d\r\n\r\n%s" % (len(_RECORD), _RECORD)


class _Canned(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # The answer in one write, without Nagle: else the delayed ACK adds 40 ms to each.
    disable_nagle_algorithm = True

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.wfile.write(_ANSWER)

    def log_message(self, *args: Any) -> None:
        pass


def overhead_bench(url: str, key: str, n: int) -> None:
    with Drydock(url=url, api_key=key) as dd:
        session = dd.sessions.create(thread_id="bench-python-client")
        try:
            measured = interleaved(n, {"raw http.client keep-alive (baseline)": raw_call(url, key, f"/v1/sessions/{session.id}/executions"), "drydock Session.run": sdk_call(session)})
            overhead = report(f"1a. run('pass') against the platform: {n} interleaved samples each", measured, "raw http.client keep-alive (baseline)", "drydock Session.run")
            print(f"  SDK overhead per run(), difference of the p50s: {overhead:.3f} ms (target < 0.5 ms)")
        finally:
            session.delete()

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Canned)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    canned = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        with Drydock(url=canned, api_key="k") as dd:
            info = SessionInfo.from_json({"id": "ses_canned", "threadId": "t", "status": "ready", "createdAt": "2026-01-01T00:00:00Z"})
            session = Session(dd._http, info)
            measured = interleaved(n * 3, {"raw http.client keep-alive (baseline)": raw_call(canned, "k", "/v1/sessions/ses_canned/executions"), "drydock Session.run": sdk_call(session)})
            overhead = report(f"1b. the same against a canned local answer (no platform): {n * 3} samples each", measured, "raw http.client keep-alive (baseline)", "drydock Session.run")
            print(f"  SDK overhead per run(), difference of the p50s: {overhead:.3f} ms (the SDK's own work: body, headers, pool, record;")
            print("  the canned server runs in this process, so its CPU counts in both columns)")
    finally:
        server.shutdown()
        server.server_close()


def child_submit(url: str, key: str, count: int, materialize: bool) -> None:
    """One submission in a fresh interpreter: prints its figures as JSON. ``materialize``
    builds the items as a list first (the control: what the generator saves)."""
    dd = Drydock(url=url, api_key=key)
    dd.batches.list(limit=1)  # the connection and the modules, before the baseline
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    sent: list[int] = []
    started = time.perf_counter()
    items: Any = ({"code": f"x = {i}\nx * 2", "id": f"item-{i}"} for i in range(count))
    if materialize:
        items = list(items)
    run = dd.batches.submit(items, concurrency=1, on_sent=sent.append)
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    run.cancel(kill=True)
    if run.info.total != count:
        raise SystemExit(f"the batch has {run.info.total} items, not {count}")
    print(json.dumps({"count": count, "materialized": materialize, "baselineKb": baseline, "peakKb": peak, "seconds": seconds, "onSentCalls": len(sent), "lastSent": sent[-1]}))


def memory_bench(url: str, key: str, counts: list[int]) -> None:
    rows = []
    runs = [(count, False) for count in counts] + [(counts[-1], True)]
    for count, materialize in runs:
        out = subprocess.run(
            [sys.executable, __file__, "--child-submit", str(count), "--url", url, "--api-key", key, *(["--materialize"] if materialize else [])],
            capture_output=True, text=True, timeout=900, env=dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p)),
        )
        if out.returncode != 0:
            raise SystemExit(f"the {count}-item submission failed:\n{out.stderr}")
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    print("2. batches.submit (a fresh interpreter each; peak RSS = getrusage ru_maxrss; each batch cancelled at once)")
    print(f"  {'items from':>22} {'RSS before MiB':>15} {'peak RSS MiB':>13} {'growth MiB':>11} {'submit s':>9} {'items/s':>9} {'on_sent calls':>14}")
    for r in rows:
        source = f"{r['count']:,} " + ("a list (control)" if r["materialized"] else "a generator")
        print(
            f"  {source:>22} {r['baselineKb'] / 1024:>15.1f} {r['peakKb'] / 1024:>13.1f} {(r['peakKb'] - r['baselineKb']) / 1024:>11.1f}"
            f" {r['seconds']:>9.2f} {r['count'] / r['seconds']:>9.0f} {r['onSentCalls']:>14}"
        )
    generated = [r for r in rows if not r["materialized"]]
    if len(generated) >= 2:
        print(f"  peak RSS from a generator, {generated[-1]['count']:,} vs {generated[0]['count']:,} items: {(generated[-1]['peakKb'] - generated[0]['peakKb']) / 1024:+.1f} MiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=400, help="samples of each kind (default 400)")
    parser.add_argument("--items", default="10000,100000", help="batch sizes of the memory bench (default 10000,100000)")
    parser.add_argument("--url", help="bench this running gateway instead of one booted here")
    parser.add_argument("--admin-key", help="its admin key (else DRYDOCK_ADMIN_KEY)")
    parser.add_argument("--child-submit", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--api-key", help=argparse.SUPPRESS)
    parser.add_argument("--materialize", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_submit:
        return child_submit(args.url, args.api_key, args.child_submit, args.materialize)
    if args.url:
        os.environ["DRYDOCK_TEST_URL"] = args.url
        os.environ["DRYDOCK_ADMIN_KEY"] = args.admin_key or os.environ.get("DRYDOCK_ADMIN_KEY", "")
    platform = harness.start()
    try:
        _, key = harness.new_tenant(platform.url, platform.admin_key, {"requestsPerMinute": 1_000_000}, prefix="bench-py")
        mode = "running gateway at " + platform.url if args.url else "in-process gateway + worker (tests/platform.ts)"
        print(f"bench/python-client: {mode}; Python {sys.version.split()[0]}; drydock from {Path(sys.modules['drydock'].__file__).parent}")
        overhead_bench(platform.url, key, args.n)
        memory_bench(platform.url, key, [int(c) for c in args.items.split(",")])
    finally:
        platform.stop()


if __name__ == "__main__":
    main()
