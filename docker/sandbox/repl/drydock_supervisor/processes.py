"""Process utilities: the cgroup's OOM and CPU counters, a /proc scan, and shielding the
supervisor from same-uid processes."""

from __future__ import annotations

import ctypes
import os

from .framing import log

OOM_COUNTER_FILES = (
    "/sys/fs/cgroup/memory.events",  # cgroup v2
    "/sys/fs/cgroup/memory/memory.oom_control",  # cgroup v1
)


def read_oom_kills(paths: tuple[str, ...]) -> int | None:
    """The cgroup's `oom_kill` counter, or None when no counter is readable."""
    for path in paths:
        try:
            with open(path) as f:
                for line in f:
                    parts = line.split()
                    if len(parts) == 2 and parts[0] == "oom_kill":
                        return int(parts[1])
        except (OSError, ValueError):
            continue
    return None


CPU_COUNTER_FILES = (
    ("/sys/fs/cgroup/cpu.stat", 1),  # cgroup v2: "usage_usec N", microseconds
    ("/sys/fs/cgroup/cpuacct/cpuacct.usage", 1000),  # cgroup v1: nanoseconds
)


def read_cpu_usec(paths: tuple[tuple[str, int], ...] = CPU_COUNTER_FILES) -> int | None:
    """CPU time used by every process of the container so far (its cgroup's counter),
    in microseconds, or None when no counter is readable."""
    for path, divisor in paths:
        try:
            with open(path) as f:
                text = f.read()
        except OSError:
            continue
        try:
            if divisor == 1:
                for line in text.splitlines():
                    parts = line.split()
                    if len(parts) == 2 and parts[0] == "usage_usec":
                        return int(parts[1])
            else:
                return int(text.strip()) // divisor
        except ValueError:
            continue
    return None


def iter_processes() -> list[tuple[int, int, int]]:
    """(pid, ppid, pgrp) of every live (non-zombie) process visible in /proc."""
    out: list[tuple[int, int, int]] = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
            # The command name is in parentheses and may itself contain ") ".
            fields = stat[stat.rindex(b")") + 2 :].split()
            if fields[0] in (b"Z", b"X"):
                continue
            out.append((int(name), int(fields[1]), int(fields[2])))
        except (OSError, ValueError, IndexError):
            continue
    return out



def make_undumpable() -> None:
    """Shield this process from the kernel, which runs as the same (non-root) user.

    Same-uid processes may otherwise open /proc/<supervisor>/fd/<channel> and write
    forged frames straight to the host, or ptrace us. A non-dumpable process has its
    /proc entries owned by root and refuses ptrace-style access without
    CAP_SYS_PTRACE. execve() resets the flag, so the kernel is unaffected.
    """
    pr_set_dumpable = 4
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(pr_set_dumpable, 0, 0, 0, 0) != 0:
            log(f"prctl(PR_SET_DUMPABLE) failed: {os.strerror(ctypes.get_errno())}")
    except (OSError, AttributeError) as exc:
        log(f"cannot make the supervisor non-dumpable: {exc}")

