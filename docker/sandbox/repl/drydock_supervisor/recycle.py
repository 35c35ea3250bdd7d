"""Recycling: making a sandbox as new between two one-shot runs of the same owner (batch
items), then checking that it is. Only with the two-user layout (privileges.py): every
process of the sandbox user is then user code, and can be killed without touching the
supervisor or init.

What an item could leave for the next one, and where it goes:
- processes (background, daemonised, setsid'd): killed with kill(-1) from a child that is
  the plain sandbox user, repeated until /proc shows none;
- files in /session, /tmp, /dev/shm, /dev/mqueue (POSIX shared memory and message
  queues): emptied, without following symlinks, fixing modes it set to keep us out;
- System V shared memory, semaphores and message queues: removed;
- the interpreter (variables, imports, monkey patches): the kernel is replaced by a new
  one (event_loop's caller does that).
- the scheduling of the supervisor's own processes: user code can lower it (nice,
  SCHED_IDLE, CPUs: those calls compare effective uids only) and nothing can raise it
  back, so a change makes the sandbox not clean (checked, not undone).
Anything else is outside user code's reach: the root filesystem is read-only, the
network is none, keyrings and ptrace are denied by the seccomp profile.
"""

from __future__ import annotations

import ctypes
import os
import signal
import stat
import time

from .privileges import Identity, become_sandbox_user
from .processes import iter_processes

# Directories emptied besides the session dir: where else the sandbox user may write.
DEFAULT_SCRATCH_DIRS = ("/tmp", "/dev/shm", "/dev/mqueue")
KILL_ROUNDS = 20
IPC_RMID = 0
SYSV_IPC = (("shm", "shmctl"), ("sem", "semctl"), ("msg", "msgctl"))


def scheduling(pid: int) -> tuple[int, int, frozenset[int]]:
    """A process's scheduling policy, nice value and CPUs."""
    return os.sched_getscheduler(pid), os.getpriority(os.PRIO_PROCESS, pid), frozenset(os.sched_getaffinity(pid))


# The supervisor's as it started: this module is imported before any user code runs.
SCHEDULING_AT_START = scheduling(0)


def user_processes(uid: int, exclude: frozenset[int] = frozenset()) -> list[int]:
    """Live processes whose real uid is `uid`."""
    found: list[int] = []
    for pid, _ppid, _pgrp, _sid in iter_processes():
        if pid in exclude:
            continue
        try:
            with open(f"/proc/{pid}/status", "rb") as f:
                for line in f:
                    if line.startswith(b"Uid:"):
                        if int(line.split()[1]) == uid:
                            found.append(pid)
                        break
        except (OSError, ValueError, IndexError):
            continue
    return found


def kill_user_processes(identity: Identity) -> list[int]:
    """SIGKILLs every process of the sandbox user; returns those still alive after.

    kill(-1) sent by a child that is the plain sandbox user reaches exactly what user
    code could reach (never the supervisor, never init), all at once, which a fork
    bomb cannot outrun; it is repeated until nothing is left.
    """
    assert identity.sandbox_uid is not None
    left: list[int] = []
    for _ in range(KILL_ROUNDS):
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child only kills and exits
            try:
                become_sandbox_user(identity)
                os.kill(-1, signal.SIGKILL)
            except BaseException:
                os._exit(1)
            os._exit(0)
        os.waitpid(pid, 0)
        left = user_processes(identity.sandbox_uid)
        if not left:
            return []
        time.sleep(0.002)
    return left


def empty_dir(path: str) -> list[str]:
    """Removes everything inside `path` (not `path` itself); returns what stayed."""
    problems: list[str] = []
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return problems
    except OSError as exc:
        return [f"{path}: {exc.strerror}"]
    try:
        _empty(fd, path, problems)
    finally:
        os.close(fd)
    return problems


def _empty(dir_fd: int, where: str, problems: list[str]) -> None:
    try:
        names = os.listdir(dir_fd)
    except OSError as exc:
        problems.append(f"{where}: {exc.strerror}")
        return
    for name in names:
        try:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            continue
        except OSError as exc:
            problems.append(f"{where}/{name}: {exc.strerror}")
            continue
        if stat.S_ISDIR(st.st_mode):
            try:
                # Modes user code set to keep others out do not keep out its own uid.
                # (A directory swapped for a symlink meanwhile can only point at what
                # the sandbox user owns: that is all this process may chmod.)
                if st.st_mode & 0o700 != 0o700:
                    os.chmod(name, 0o700, dir_fd=dir_fd)
                sub = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
            except FileNotFoundError:
                continue
            except OSError as exc:
                problems.append(f"{where}/{name}: {exc.strerror}")
                continue
            try:
                _empty(sub, f"{where}/{name}", problems)
            finally:
                os.close(sub)
            try:
                os.rmdir(name, dir_fd=dir_fd)
            except OSError as exc:
                problems.append(f"{where}/{name}: {exc.strerror}")
        else:
            try:
                os.unlink(name, dir_fd=dir_fd)
            except FileNotFoundError:
                continue
            except OSError as exc:
                problems.append(f"{where}/{name}: {exc.strerror}")


def remove_sysv_ipc(uid: int) -> list[str]:
    """Removes the System V IPC objects `uid` owns; returns what stayed."""
    problems: list[str] = []
    libc = ctypes.CDLL(None, use_errno=True)
    for kind, call in SYSV_IPC:
        for ident in _sysv_ids(kind, uid):
            function = getattr(libc, call)
            result = function(ident, 0, IPC_RMID, None) if kind == "sem" else function(ident, IPC_RMID, None)
            if result != 0:
                problems.append(f"System V {kind} {ident}: {os.strerror(ctypes.get_errno())}")
    return problems


def _sysv_ids(kind: str, uid: int) -> list[int]:
    try:
        with open(f"/proc/sysvipc/{kind}") as f:
            header = f.readline().split()
            id_col = header.index({"shm": "shmid", "sem": "semid", "msg": "msqid"}[kind])
            uid_col = header.index("uid")
            return [int(row.split()[id_col]) for row in f if row.strip() and int(row.split()[uid_col]) == uid]
    except (OSError, ValueError, IndexError):
        return []


def leftovers(identity: Identity, dirs: list[str], kernel_pid: int | None) -> list[str]:
    """What a check finds that should not be there after recycling."""
    assert identity.sandbox_uid is not None
    problems: list[str] = []
    exclude = frozenset([kernel_pid]) if kernel_pid else frozenset()
    for pid in user_processes(identity.sandbox_uid, exclude):
        problems.append(f"process {pid} of the sandbox user survived")
    for path in dirs:
        try:
            names = os.listdir(path)
        except FileNotFoundError:
            continue
        except OSError as exc:
            problems.append(f"{path}: {exc.strerror}")
            continue
        if names:
            problems.append(f"{path} still holds {', '.join(sorted(names)[:5])}")
    for kind, _call in SYSV_IPC:
        if _sysv_ids(kind, identity.sandbox_uid):
            problems.append(f"System V {kind} objects survived")
    # The supervisor and the processes it started under its own user (the zygote).
    for pid in user_processes(identity.supervisor_uid):
        try:
            changed = scheduling(pid) != SCHEDULING_AT_START
        except OSError:
            continue  # gone meanwhile
        if changed:
            problems.append(f"process {pid} of the supervisor's user was rescheduled (policy, nice or CPUs)")
    return problems
