"""CPU and round trip of one trivial exec through the REPL supervisor, on the host.

Starts docker/sandbox/repl/supervisor.py the way its tests do (repl_test_support.Client,
stdin/stdout channel, no container), runs `print(1)` N times each way the worker sends
an exec (without `stream` events, the default; with them, when SSE relays the output),
alternating in blocks, and prints the round trip and the CPU the supervisor and its
kernel used per exec (from /proc). The baseline in the
same run is a plain Python echo process on a pipe: the cost of a round trip through a
Python process that does nothing else.

    python3 bench/repl-supervisor/run.py [N]
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "docker", "sandbox", "repl"))

from repl_test_support import Client  # noqa: E402

ECHO = "import sys\nfor line in sys.stdin:\n    sys.stdout.write(line); sys.stdout.flush()\n"


def tree_cpu_ms(root: int) -> float:
    """CPU (user + system) of `root` and its descendants, in ms."""
    parents: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry)] = int(fields[1])
        ticks[int(entry)] = int(fields[11]) + int(fields[12])
    total = 0
    for pid, t in ticks.items():
        p = pid
        while p > 1 and p != root:
            p = parents.get(p, 0)
        if p == root:
            total += t
    return total * 1000.0 / os.sysconf("SC_CLK_TCK")


def timed(client: Client, n: int, **options: bool) -> tuple[float, float]:
    """Wall time (s) and supervisor + kernel CPU (ms) of n execs of print(1)."""
    cpu0, t0 = tree_cpu_ms(client.proc.pid), time.perf_counter()
    for _ in range(n):
        done = client.run("print(1)", **options)
        assert done["stdout"] == "1\n", done
    return time.perf_counter() - t0, tree_cpu_ms(client.proc.pid) - cpu0


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    # As the worker sends an exec: nothing was written into /session from outside, and
    # output is streamed only when someone relays it (SSE); alternated in blocks.
    modes = {
        "no stream events (default)": {"session_unchanged": True, "stream": False},
        "stream events (SSE relayed)": {"session_unchanged": True, "stream": True},
    }
    totals = {name: [0.0, 0.0] for name in modes}
    client = Client()
    try:
        for _ in range(50):
            client.run("print(1)")
        block = max(1, n // 10)
        for _ in range(10):
            for name, options in modes.items():
                wall, cpu = timed(client, block, **options)
                totals[name][0] += wall
                totals[name][1] += cpu
        runs = block * 10
    finally:
        client.close()

    echo = subprocess.Popen([sys.executable, "-u", "-c", ECHO], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert echo.stdin is not None and echo.stdout is not None
    cpu0, t0 = tree_cpu_ms(echo.pid), time.perf_counter()
    for _ in range(n):
        echo.stdin.write(b"x\n")
        echo.stdin.flush()
        echo.stdout.readline()
    base_wall, base_cpu = time.perf_counter() - t0, tree_cpu_ms(echo.pid) - cpu0
    echo.stdin.close()
    echo.wait()

    print(f"{runs} execs of print(1) per row through the supervisor (host, no container)")
    print(f"{'':48} {'round trip ms':>14} {'CPU ms':>8}")
    for name, (wall, cpu) in totals.items():
        print(f"{'supervisor + kernel, ' + name:48} {wall / runs * 1000:14.3f} {cpu / runs:8.3f}")
    print(f"{'Python echo on a pipe (baseline)':48} {base_wall / n * 1000:14.3f} {base_cpu / n:8.3f}")
    wall, cpu = totals["no stream events (default)"]
    print(f"ratio: round trip {wall / runs / (base_wall / n):.1f}x, CPU {cpu / runs / max(base_cpu / n, 1e-9):.1f}x the baseline")


if __name__ == "__main__":
    main()
