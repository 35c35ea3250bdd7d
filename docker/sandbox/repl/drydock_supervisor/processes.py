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


class CounterFile:
    """The first of `paths` that opens, kept open and read again from its start each
    time: a cgroup file regenerates its content on every read from offset 0, so a read
    is one pread instead of an open, fstat, ioctl, read and close (and, on cgroup v1,
    the failed opens of the v2 names first). Until one opens, every read tries again."""

    def __init__(self, paths: tuple[str, ...]) -> None:
        self.paths = paths
        self.path: str | None = None
        self._fd: int | None = None

    def text(self) -> str | None:
        if self._fd is None:
            for path in self.paths:
                try:
                    self._fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
                except OSError:
                    continue
                self.path = path
                break
            else:
                return None
        try:
            return os.pread(self._fd, 65536, 0).decode("ascii", "replace")
        except OSError:
            return None


def read_oom_kills(counter: CounterFile) -> int | None:
    """The cgroup's `oom_kill` counter, or None when no counter is readable."""
    text = counter.text()
    if text is None:
        return None
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "oom_kill":
            try:
                return int(parts[1])
            except ValueError:
                return None
    return None


CPU_COUNTER_FILES = (
    "/sys/fs/cgroup/cpu.stat",  # cgroup v2: "usage_usec N", microseconds
    "/sys/fs/cgroup/cpuacct/cpuacct.usage",  # cgroup v1: nanoseconds
)


def read_cpu_usec(counter: CounterFile) -> int | None:
    """CPU time used by every process of the container so far (its cgroup's counter),
    in microseconds, or None when no counter is readable."""
    text = counter.text()
    if text is None:
        return None
    try:
        if counter.path is not None and counter.path.endswith("cpuacct.usage"):
            return int(text.strip()) // 1000
        for line in text.splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0] == "usage_usec":
                return int(parts[1])
    except ValueError:
        return None
    return None


def iter_processes() -> list[tuple[int, int, int, int]]:
    """(pid, ppid, pgrp, session) of every live (non-zombie) process visible in /proc."""
    out: list[tuple[int, int, int, int]] = []
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
            out.append((int(name), int(fields[1]), int(fields[2]), int(fields[3])))
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

