#!/usr/bin/env python3
"""Drydock REPL supervisor: the long-lived main process of a sandbox container.

It owns the host channel (length-prefixed JSON frames on the container's stdin/stdout,
see README.md) and never runs user code itself. User code runs in kernel.py, a child
process in its own session/process group whose stdout/stderr are pipes read here, so
nothing the user does can write a frame to the host. The supervisor enforces the
per-exec wall-clock timeout (SIGINT, then SIGKILL of the whole process group), the
per-stream output cap, and respawns the kernel when it dies (OOM kill, os._exit, ...).

Single-threaded: one `selectors` loop over the host channel, the kernel's pipes and a
pidfd for the kernel, with the timeouts computed from deadlines.

Standard library only.
"""

from __future__ import annotations

import codecs
import errno
import ctypes
import json
import os
import selectors
import signal
import stat
import struct
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Any, NoReturn

PROTOCOL_VERSION = 1
HEADER = struct.Struct(">I")
MAX_HOST_FRAME = 16 * 1024 * 1024
# The kernel caps result/error text, but a repr, its HTML and a figure's base64 PNG can
# each be up to the exec's output cap; anything beyond this is treated as a corrupt channel.
MAX_KERNEL_FRAME = 96 * 1024 * 1024
READ_CHUNK = 256 * 1024
DEFAULT_TIMEOUT_MS = 30_000
DEFAULT_MAX_OUTPUT_BYTES = 1024 * 1024
KERNEL_START_TIMEOUT_S = 30.0
KERNEL_START_ATTEMPTS = 3
# Bound on the reads of one post-result drain: a background child that writes
# non-stop must not be able to hold up the `done` frame forever.
DRAIN_MAX_READS = 64
# Only used where pidfd_open is unavailable (old kernels, strict seccomp).
EXIT_POLL_INTERVAL_S = 0.1
# Order of handling within one select() batch: host first (pings stay prompt), kernel
# output before results, the pidfd last so a result written just before an exit counts.
EVENT_PRIORITY = {"host": 0, "stdout": 1, "stderr": 1, "result": 2, "command": 3, "pidfd": 4}
KERNEL_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernel.py")
# Change report (see README): the walk of the session dir stops after this many entries.
SNAPSHOT_MAX_ENTRIES = 100_000
# Top-level entry of the session dir that the change report ignores (listed separately).
ARTIFACTS_NAME = "artifacts"
# Artifacts listing (see README): the walk of <session>/artifacts stops after this many entries.
ARTIFACTS_MAX_ENTRIES = 10_000
CLOCK_REALTIME_COARSE = getattr(time, "CLOCK_REALTIME_COARSE", 5)  # Linux value
# At most this long before an exec waits for the file-timestamp clock to tick (below).
SNAPSHOT_TICK_WAIT_S = 0.05
OOM_COUNTER_FILES = (
    "/sys/fs/cgroup/memory.events",  # cgroup v2
    "/sys/fs/cgroup/memory/memory.oom_control",  # cgroup v1
)


def log(message: str) -> None:
    """Diagnostics go to stderr, i.e. the container log, never to the host channel."""
    try:
        sys.stderr.write(f"drydock-repl: {message}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


class Exit(Exception):
    """Unwinds the event loop; the supervisor cleans up and exits with ``code``."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def encode_frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
    data = body.encode("utf-8", "replace")  # lone surrogates become "?"
    return HEADER.pack(len(data)) + data


class FrameReader:
    """Incremental decoder for length-prefixed frames.

    ``feed`` returns complete frame bodies; a frame longer than ``max_len`` yields
    ``OVERSIZE`` once and its body is skipped as it streams in.
    """

    OVERSIZE = object()

    def __init__(self, max_len: int) -> None:
        self.max_len = max_len
        self._buf = bytearray()
        self._skip = 0

    def feed(self, data: bytes) -> list[Any]:
        self._buf += data
        out: list[Any] = []
        while True:
            if self._skip:
                dropped = min(self._skip, len(self._buf))
                del self._buf[:dropped]
                self._skip -= dropped
                if self._skip:
                    break
            if len(self._buf) < HEADER.size:
                break
            (length,) = HEADER.unpack_from(self._buf)
            if length > self.max_len:
                del self._buf[: HEADER.size]
                self._skip = length
                out.append(self.OVERSIZE)
                continue
            end = HEADER.size + length
            if len(self._buf) < end:
                break
            out.append(bytes(self._buf[HEADER.size : end]))
            del self._buf[:end]
        return out


def utf8_prefix_len(data: bytes, limit: int) -> int:
    """Largest cut <= limit that does not split a UTF-8 character of ``data``."""
    if limit >= len(data):
        return len(data)
    cut = max(limit, 0)
    # data[cut] is the first byte dropped; if it continues a character, drop the whole
    # character (at most 3 continuation bytes precede nothing but its lead byte).
    for _ in range(3):
        if cut == 0 or data[cut] & 0xC0 != 0x80:
            break
        cut -= 1
    return cut


class Capture:
    """One output stream of one exec: bytes kept up to the cap, the rest dropped."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.data = bytearray()
        self.truncated = False
        # Incremental so a character split across two pipe reads decodes correctly in
        # the stream events; yields exactly what decoding ``data`` at once would.
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def add(self, chunk: bytes) -> str:
        """Keep what fits; return the newly decodable text to forward."""
        if self.truncated:
            return ""
        room = self.cap - len(self.data)
        if len(chunk) > room:
            chunk = chunk[: utf8_prefix_len(chunk, room)]
            self.truncated = True  # from now on everything is dropped
        self.data += chunk
        return self._decoder.decode(chunk)

    def finish(self) -> str:
        """Text held back by the decoder (an incomplete trailing character)."""
        return self._decoder.decode(b"", final=True)

    def text(self) -> str:
        return self.data.decode("utf-8", "replace")


@dataclass
class Exec:
    id: str
    code: str
    timeout_ms: float
    cap: int
    stdout: Capture
    stderr: Capture
    capture_figures: bool = True
    state_lost: bool = False
    started: float | None = None  # monotonic; None until sent to a ready kernel
    deadline: float = 0.0
    interrupted_at: float | None = None  # when SIGINT was sent on timeout
    oom_before: int | None = None
    snapshot: Snapshot | None = None  # session dir before the cell (change report)
    # The host says it wrote nothing into the session dir since the last `done`.
    session_unchanged: bool = False
    # Files may have changed since `snapshot` was taken (events seen between execs).
    dirty: bool = True
    tracking_ms: float = 0.0  # time spent on the change report


@dataclass
class KernelProc:
    proc: subprocess.Popen[bytes]
    generation: int
    command_fd: int  # write end, non-blocking
    result_fd: int
    stdout_fd: int
    stderr_fd: int
    pidfd: int | None
    started_at: float
    results: FrameReader = field(default_factory=lambda: FrameReader(MAX_KERNEL_FRAME))
    pending: bytes = b""  # command bytes not yet accepted by the pipe
    pending_off: int = 0
    writing: bool = False  # command_fd registered for EVENT_WRITE
    ready: bool = False

    @property
    def pid(self) -> int:
        return self.proc.pid


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


# ------------------------------------------------------------- change report

# Signature of one entry: (kind, size, mtime_ns, inode, ctime_ns). ctime_ns on top of
# mtime_ns catches a rewrite whose mtime was put back with os.utime.
Signature = tuple[str, int, int, int, int]


def kind_of(mode: int) -> str:
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISFIFO(mode):
        return "fifo"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISDIR(mode):
        return "directory"
    return "other"


@dataclass
class Snapshot:
    entries: dict[str, Signature]  # "/rel/path" -> signature; directories not included
    unreadable: list[str]  # directories that could not be listed ("/rel/dir")
    truncated: bool
    newest_ns: int  # largest mtime/ctime seen
    dirs: list[str] = field(default_factory=list)  # directories walked ("" = root)


def take_snapshot(root: str, limit: int = SNAPSHOT_MAX_ENTRIES) -> Snapshot:
    """lstat-level view of every non-directory under root, except root/artifacts.

    Never follows symlinks; a directory that cannot be listed is recorded as
    unreadable (its old contents are then not reported as deleted).
    """
    entries: dict[str, Signature] = {}
    unreadable: list[str] = []
    dirs: list[str] = []
    newest = 0
    count = 0
    truncated = False
    stack = [(root, "")]
    while stack:
        path, rel = stack.pop()
        try:
            it = os.scandir(path)
        except FileNotFoundError:
            continue  # removed while walking
        except OSError:
            if rel:
                unreadable.append(rel)
            continue
        dirs.append(rel)
        with it:
            for entry in it:
                name = entry.name
                if not rel and name == ARTIFACTS_NAME:
                    continue
                count += 1
                if count > limit:
                    truncated = True
                    break
                child = f"{rel}/{name}"
                try:
                    if entry.is_dir(follow_symlinks=False):
                        stack.append((entry.path, child))
                        continue
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue  # vanished between readdir and lstat
                mtime, ctime = st.st_mtime_ns, st.st_ctime_ns
                kind = kind_of(st.st_mode)
                if kind == "file" and st.st_nlink > 1:
                    # Hard links are not mirrored (the host never reads them back).
                    kind = "hardlink"
                entries[child] = (kind, st.st_size, mtime, st.st_ino, ctime)
                if mtime > newest:
                    newest = mtime
                if ctime > newest:
                    newest = ctime
        if truncated:
            break
    return Snapshot(entries, unreadable, truncated, newest, dirs)


def unchanged_report(snapshot: Snapshot) -> dict[str, Any]:
    """The change report of an exec during which nothing under the root changed."""
    report: dict[str, Any] = {
        "changed": [],
        "deleted": [],
        "skipped": [{"path": rel, "reason": "unreadable"} for rel in sorted(snapshot.unreadable)],
    }
    if snapshot.truncated:
        report["truncated"] = True
    return report


# inotify (linux/inotify.h). Every event that can change what a snapshot sees.
_IN_MODIFY, _IN_ATTRIB, _IN_CLOSE_WRITE = 0x2, 0x4, 0x8
_IN_MOVED_FROM, _IN_MOVED_TO, _IN_CREATE, _IN_DELETE = 0x40, 0x80, 0x100, 0x200
_IN_DELETE_SELF, _IN_MOVE_SELF = 0x400, 0x800
_IN_Q_OVERFLOW, _IN_IGNORED = 0x4000, 0x8000
_IN_DONT_FOLLOW, _IN_EXCL_UNLINK = 0x02000000, 0x04000000
_IN_NONBLOCK, _IN_CLOEXEC = os.O_NONBLOCK, os.O_CLOEXEC
_WATCH_MASK = (
    _IN_MODIFY | _IN_ATTRIB | _IN_CLOSE_WRITE | _IN_MOVED_FROM | _IN_MOVED_TO | _IN_CREATE
    | _IN_DELETE | _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_DONT_FOLLOW | _IN_EXCL_UNLINK
)
_EVENT_HEADER = struct.Struct("iIII")


class ChangeWatch:
    """Tells whether anything under the session root may have changed since the last
    drain, so that an exec which touched no file needs no walk of the tree.

    Watches every directory the last walk saw (except root/artifacts). Any event, a
    queue overflow, or a watch that could not be added makes the caller walk. Writes
    through a memory mapping raise no inotify event: a mapping made writable in an
    earlier exec and written in a later one is seen at the next walk.
    """

    def __init__(self, root: str) -> None:
        self.root = root
        self.fd = -1
        self.root_wd = -1
        try:
            self.libc = ctypes.CDLL(None, use_errno=True)
            fd = self.libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        except (OSError, AttributeError):
            return
        if fd >= 0:
            self.fd = fd

    @property
    def enabled(self) -> bool:
        return self.fd >= 0

    def disable(self, why: str) -> None:
        if self.fd >= 0:
            log(f"file change watch off ({why}); every exec walks /session")
            os.close(self.fd)
            self.fd = -1

    def watch(self, dirs: list[str]) -> None:
        """Adds (or refreshes) a watch on each directory, relative to the root."""
        for rel in dirs:
            if self.fd < 0:
                return
            path = (self.root + rel).encode("utf-8", "surrogateescape")
            wd = self.libc.inotify_add_watch(self.fd, path, _WATCH_MASK)
            if wd < 0:
                err = ctypes.get_errno()
                if err in (errno.ENOENT, errno.ENOTDIR, errno.EACCES):
                    continue  # gone or replaced since the walk: the walk saw it changing
                self.disable(os.strerror(err))
                return
            if rel == "":
                self.root_wd = wd

    def drain(self) -> bool:
        """Consumes pending events; True when any may have changed the tree."""
        if self.fd < 0:
            return True
        changed = False
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                return changed
            except OSError as exc:
                self.disable(str(exc))
                return True
            offset = 0
            while offset + _EVENT_HEADER.size <= len(data):
                wd, mask, _cookie, length = _EVENT_HEADER.unpack_from(data, offset)
                name = data[offset + _EVENT_HEADER.size : offset + _EVENT_HEADER.size + length].rstrip(b"\0")
                offset += _EVENT_HEADER.size + length
                if mask == _IN_IGNORED:
                    continue  # a watch went with its directory (whose removal was an event)
                if wd == self.root_wd and name == ARTIFACTS_NAME.encode() and not mask & _IN_Q_OVERFLOW:
                    continue  # the artifacts outbox is not part of the snapshot
                changed = True


def wait_for_timestamp_tick(newest_ns: int) -> None:
    """Return once a file written from now on gets a timestamp > newest_ns.

    File timestamps come from the coarse real-time clock (one tick, ~1-10 ms): a file
    rewritten within the same tick as the snapshot's newest entry, with the same
    size, would look unchanged. Waiting until the coarse clock has moved past the
    newest timestamp rules that out; usually it already has and this returns at once.
    """
    deadline = time.monotonic() + SNAPSHOT_TICK_WAIT_S
    while True:
        try:
            now = time.clock_gettime_ns(CLOCK_REALTIME_COARSE)
        except OSError:
            now = time.time_ns()
        if now > newest_ns or time.monotonic() >= deadline:
            return
        time.sleep(0.001)


def empty_change_report() -> dict[str, Any]:
    return {"changed": [], "deleted": [], "skipped": []}


def diff_snapshots(before: Snapshot, after: Snapshot) -> dict[str, Any]:
    changed: list[str] = []
    skipped: list[dict[str, str]] = []
    old = before.entries
    for path, sig in after.entries.items():
        if old.get(path) == sig:
            continue
        try:
            path.encode("utf-8")
        except UnicodeEncodeError:  # not valid UTF-8: cannot be named in JSON
            skipped.append({"path": path.encode("utf-8", "replace").decode("utf-8"), "reason": "encoding"})
            continue
        if sig[0] == "file":
            changed.append(path)
        else:
            skipped.append({"path": path, "reason": sig[0] if sig[0] != "directory" else "other"})
    deleted: list[str] = []
    if not after.truncated:  # an incomplete walk cannot tell what is gone
        new = after.entries
        hidden = tuple(d + "/" for d in after.unreadable)
        for path, sig in old.items():
            if sig[0] != "file":
                continue
            now = new.get(path)
            # Still a file, or hard-linked since: not deleted (the thread keeps the
            # copy it has; the link itself is reported as skipped).
            if now is not None and now[0] in ("file", "hardlink"):
                continue
            if hidden and path.startswith(hidden):
                continue
            try:
                path.encode("utf-8")
            except UnicodeEncodeError:
                continue
            deleted.append(path)
    for rel in after.unreadable:
        skipped.append({"path": rel, "reason": "unreadable"})
    changed.sort()
    deleted.sort()
    skipped.sort(key=lambda item: item["path"])
    report: dict[str, Any] = {"changed": changed, "deleted": deleted, "skipped": skipped}
    if before.truncated or after.truncated:
        report["truncated"] = True
    return report


# ------------------------------------------------------------ artifacts listing

# Opens a directory of the artifacts tree: never through a symlink, so an entry swapped
# for a symlink while the walk runs is refused instead of followed.
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def ensure_artifacts_dir(root: str) -> None:
    """Code may save to /session/artifacts/ without creating it first: it exists before
    every exec (ingestion empties it, and a new session starts without it)."""
    path = os.path.join(root, ARTIFACTS_NAME)
    if os.path.isdir(path):
        return
    try:
        os.mkdir(path, 0o755)
    except OSError:
        pass  # a file of that name, or a full disk: the code's own write reports it


def empty_artifacts_report() -> dict[str, Any]:
    return {"files": [], "skipped": [], "truncated": False}


def list_artifacts(root: str, limit: int = ARTIFACTS_MAX_ENTRIES) -> dict[str, Any]:
    """Everything under root/artifacts, lstat level (not a diff: what is there now).

    Regular files go to `files` with their size; everything else that is not a
    directory goes to `skipped` with a reason (see README). Directories are descended
    through fds opened with O_NOFOLLOW relative to their parent, so no symlink is ever
    followed, not even one swapped in while the walk runs, and no entry is ever opened
    (a FIFO cannot block it). An absent artifacts dir costs one failed open().
    """
    report = empty_artifacts_report()
    files: list[dict[str, Any]] = report["files"]
    skipped: list[dict[str, str]] = report["skipped"]
    top = "/" + ARTIFACTS_NAME
    path = os.path.join(root, ARTIFACTS_NAME)
    try:
        top_fd = os.open(path, _DIR_FLAGS)
    except FileNotFoundError:
        return report
    except OSError:
        # A symlink (ELOOP), not a directory (ENOTDIR), or a directory we cannot read.
        try:
            st = os.lstat(path)
        except OSError:
            return report
        if stat.S_ISLNK(st.st_mode):
            skipped.append({"path": top, "reason": "symlink"})
        elif stat.S_ISDIR(st.st_mode):
            skipped.append({"path": top, "reason": "unreadable"})
        return report
    # Depth-first with one open directory (fd + scandir iterator) per level.
    stack: list[tuple[int, Any, str]] = []
    count = 0
    try:
        try:
            stack.append((top_fd, os.scandir(top_fd), top))
        except OSError:
            os.close(top_fd)
            skipped.append({"path": top, "reason": "unreadable"})
            return report
        while stack:
            dir_fd, it, rel = stack[-1]
            try:
                entry = next(it, None)
            except OSError:
                entry = None
                skipped.append({"path": rel, "reason": "unreadable"})
            if entry is None:
                stack.pop()
                it.close()
                os.close(dir_fd)
                continue
            count += 1
            if count > limit:
                report["truncated"] = True
                break
            child = f"{rel}/{entry.name}"
            try:
                child.encode("utf-8")
            except UnicodeEncodeError:  # not valid UTF-8: cannot be named in JSON
                skipped.append(
                    {"path": child.encode("utf-8", "replace").decode("utf-8"), "reason": "encoding"}
                )
                continue  # a directory is not descended: its entries could not be named either
            try:
                st = entry.stat(follow_symlinks=False)  # fstatat(dir_fd, name, NOFOLLOW)
            except FileNotFoundError:
                continue  # removed while walking
            except OSError:
                skipped.append({"path": child, "reason": "unreadable"})
                continue
            kind = kind_of(st.st_mode)
            if kind == "directory":
                try:
                    sub_fd = os.open(entry.name, _DIR_FLAGS, dir_fd=dir_fd)
                except FileNotFoundError:
                    continue
                except OSError:
                    skipped.append({"path": child, "reason": "unreadable"})
                    continue
                try:
                    sub_it = os.scandir(sub_fd)
                except OSError:
                    os.close(sub_fd)
                    skipped.append({"path": child, "reason": "unreadable"})
                    continue
                stack.append((sub_fd, sub_it, child))
                continue
            if kind == "file" and st.st_nlink > 1:
                kind = "hardlink"  # like the change report: never ingested
            if kind == "file":
                files.append({"path": child, "size": st.st_size})
            else:
                skipped.append({"path": child, "reason": kind})
    finally:
        for dir_fd, it, _rel in stack:
            it.close()
            os.close(dir_fd)
    files.sort(key=lambda item: item["path"])
    skipped.sort(key=lambda item: item["path"])
    return report


# ------------------------------------------------------------------ fs-delete


def split_session_path(path: Any) -> list[str] | None:
    """Components of a "/a/b" session path, or None if it is not strictly inside."""
    if not isinstance(path, str) or not path.startswith("/") or "\0" in path:
        return None
    parts = [p for p in path.split("/") if p]
    if not parts or any(p in (".", "..") for p in parts):
        return None
    return parts


def delete_session_path(root_fd: int, parts: list[str]) -> str:
    """Unlink one file, symlink, FIFO or socket below root_fd, following no symlink.

    Unlinking never opens the entry, so a FIFO cannot block; directories are refused.

    Returns "deleted", "missing" or a refusal reason.
    """
    fds: list[int] = []
    dir_fd = root_fd
    try:
        for name in parts[:-1]:
            try:
                fd = os.open(
                    name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd
                )
            except (FileNotFoundError, NotADirectoryError, OSError) as exc:
                if isinstance(exc, FileNotFoundError):
                    return "missing"
                try:
                    st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
                except FileNotFoundError:
                    return "missing"
                except OSError:
                    return "error"
                if stat.S_ISLNK(st.st_mode):
                    return "symlink"
                if not stat.S_ISDIR(st.st_mode):
                    return "missing"  # a file where a directory would be: nothing to delete
                return "permission" if isinstance(exc, PermissionError) else "error"
            fds.append(fd)
            dir_fd = fd
        name = parts[-1]
        try:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            return "missing"
        except PermissionError:
            return "permission"
        except OSError:
            return "error"
        kind = kind_of(st.st_mode)
        if kind not in ("file", "symlink", "fifo", "socket"):
            return kind
        try:
            os.unlink(name, dir_fd=dir_fd)
        except FileNotFoundError:
            return "missing"
        except PermissionError:
            return "permission"
        except IsADirectoryError:
            return "directory"
        except OSError:
            return "error"
        return "deleted"
    finally:
        for fd in fds:
            os.close(fd)


class Supervisor:
    def __init__(
        self,
        host_in: int,
        host_out: int,
        session_dir: str,
        grace_s: float,
        oom_files: tuple[str, ...],
    ) -> None:
        self.host_in = host_in
        self.host_out = host_out
        self.session_dir = session_dir
        self.grace_s = grace_s
        self.oom_files = oom_files
        self.selector = selectors.DefaultSelector()
        self.host_frames = FrameReader(MAX_HOST_FRAME)
        self.kernel: KernelProc | None = None
        self.generation = 0
        self.current: Exec | None = None
        # The kernel was replaced since the last exec finished: the next `done` says so.
        self.state_lost = False
        self.announced = False  # the host got `ready`
        self.start_failures = 0
        self.next_poll = 0.0
        self.watch = ChangeWatch(session_dir)
        # The session dir as the last exec left it, while nothing has written since.
        self.last_snapshot: Snapshot | None = None

    # ------------------------------------------------------------- event loop

    def run(self) -> int:
        try:
            self.selector.register(self.host_in, selectors.EVENT_READ, ("host", None))
            self.spawn_kernel()
            while True:
                events = self.selector.select(self.select_timeout())
                events.sort(key=lambda ev: EVENT_PRIORITY[ev[0].data[0]])
                for key, _mask in events:
                    kind, generation = key.data
                    kernel = self.kernel
                    stale = kernel is None or kernel.generation != generation
                    if generation is not None and stale:
                        continue  # fd of a kernel replaced earlier in this batch
                    self.dispatch_event(kind, kernel)
                self.check_timers()
        except Exit as exc:
            return exc.code
        finally:
            self.stop_kernel()

    def dispatch_event(self, kind: str, kernel: KernelProc | None) -> None:
        if kind == "host":
            self.on_host_readable()
            return
        assert kernel is not None
        if kind in ("stdout", "stderr"):
            self.on_output_readable(kernel, kind)
        elif kind == "result":
            self.on_result_readable(kernel)
        elif kind == "command":
            self.flush_command(kernel)
        elif kind == "pidfd":
            self.drain_results(kernel)
            if self.kernel is kernel:
                self.kernel_lost(kernel, "exited")

    def select_timeout(self) -> float | None:
        deadlines: list[float] = []
        kernel, cur = self.kernel, self.current
        if kernel is not None:
            if not kernel.ready:
                deadlines.append(kernel.started_at + KERNEL_START_TIMEOUT_S)
            if kernel.pidfd is None:
                deadlines.append(self.next_poll)
        if cur is not None and cur.started is not None:
            if cur.interrupted_at is None:
                deadlines.append(cur.deadline)
            else:
                deadlines.append(cur.interrupted_at + self.grace_s)
        if not deadlines:
            return None
        return max(0.0, min(deadlines) - time.monotonic())

    def check_timers(self) -> None:
        now = time.monotonic()
        kernel = self.kernel
        if kernel is None:
            return
        if not kernel.ready and now - kernel.started_at > KERNEL_START_TIMEOUT_S:
            log("kernel did not become ready in time")
            self.kernel_lost(kernel, "startup")
            return
        if kernel.pidfd is None and now >= self.next_poll:
            self.next_poll = now + EXIT_POLL_INTERVAL_S
            if kernel.proc.poll() is not None:
                self.kernel_lost(kernel, "exited")
                return
        cur = self.current
        if cur is None or cur.started is None:
            return
        if cur.interrupted_at is None:
            if now >= cur.deadline:
                # First ask nicely: the kernel turns SIGINT into KeyboardInterrupt and
                # keeps its state. Escalate if it has not answered after the grace.
                cur.interrupted_at = now
                try:
                    os.kill(kernel.pid, signal.SIGINT)
                except ProcessLookupError:
                    pass
        elif now >= cur.interrupted_at + self.grace_s:
            self.kernel_lost(kernel, "timeout")

    # ------------------------------------------------------------ host channel

    def send(self, message: dict[str, Any]) -> None:
        data = memoryview(encode_frame(message))
        while data:
            try:
                data = data[os.write(self.host_out, data):]
            except BlockingIOError:  # the host's end may be non-blocking
                self._wait_writable(self.host_out)
            except (BrokenPipeError, ConnectionResetError):
                log("host channel closed")
                raise Exit(0) from None

    @staticmethod
    def _wait_writable(fd: int) -> None:
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_WRITE)
            sel.select()

    def on_host_readable(self) -> None:
        try:
            data = os.read(self.host_in, READ_CHUNK)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            log(f"reading the host channel failed: {exc}")
            data = b""
        if not data:
            log("host channel reached EOF; exiting")
            raise Exit(0)
        for frame in self.host_frames.feed(data):
            if frame is FrameReader.OVERSIZE:
                self.protocol_error(f"frame larger than {MAX_HOST_FRAME} bytes; discarded")
                continue
            try:
                message = json.loads(frame.decode("utf-8"))
            except ValueError as exc:  # includes UnicodeDecodeError
                self.protocol_error(f"frame is not UTF-8 JSON: {exc}")
                continue
            if not isinstance(message, dict):
                self.protocol_error("frame is not a JSON object")
                continue
            self.on_host_message(message)

    def protocol_error(self, message: str) -> None:
        log(f"protocol error: {message}")
        self.send({"ev": "protocol_error", "message": message})

    def on_host_message(self, message: dict[str, Any]) -> None:
        op = message.get("op")
        if op == "ping":
            self.send({"ev": "pong", "id": message.get("id")})
        elif op == "exec":
            self.on_exec_request(message)
        elif op == "fs-delete":
            self.on_fs_delete(message)
        elif op == "shutdown":
            log("shutdown requested")
            raise Exit(0)
        else:
            self.protocol_error(f"unknown op {op!r}")

    def on_exec_request(self, message: dict[str, Any]) -> None:
        exec_id = message.get("id")
        if not isinstance(exec_id, str):
            self.protocol_error("exec needs a string id")
            return
        code = message.get("code")
        timeout_ms = message.get("timeoutMs", DEFAULT_TIMEOUT_MS)
        cap = message.get("maxOutputBytes", DEFAULT_MAX_OUTPUT_BYTES)
        capture_figures = message.get("captureFigures", True)
        session_unchanged = message.get("sessionUnchanged", False)
        problem = None
        if not isinstance(code, str):
            problem = "code must be a string"
        elif not is_number(timeout_ms) or timeout_ms <= 0:
            problem = "timeoutMs must be a positive number"
        elif not is_number(cap) or not isinstance(cap, int) or cap < 0:
            problem = "maxOutputBytes must be a non-negative integer"
        elif not isinstance(capture_figures, bool):
            problem = "captureFigures must be a boolean"
        elif not isinstance(session_unchanged, bool):
            problem = "sessionUnchanged must be a boolean"
        if problem is not None:
            self.send_rejection(exec_id, "InvalidRequest", problem)
            return
        if self.current is not None:
            self.send_rejection(exec_id, "Busy", "another exec is still running")
            return
        self.current = Exec(
            id=exec_id,
            code=code,
            timeout_ms=float(timeout_ms),
            cap=cap,
            stdout=Capture(cap),
            stderr=Capture(cap),
            capture_figures=capture_figures,
            session_unchanged=session_unchanged,
        )
        if self.kernel is not None and self.kernel.ready:
            self.start_exec()
        # else: it starts when the (re)spawned kernel reports ready.

    def on_fs_delete(self, message: dict[str, Any]) -> None:
        request_id = message.get("id")
        paths = message.get("paths")
        if not isinstance(request_id, str) or not isinstance(paths, list):
            self.protocol_error("fs-delete needs a string id and a list of paths")
            return
        deleted: list[str] = []
        missing: list[str] = []
        refused: list[dict[str, Any]] = []
        if self.current is not None:
            refused = [{"path": p, "reason": "busy"} for p in paths]
        else:
            root_fd: int | None = None
            try:
                root_fd = os.open(self.session_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            except OSError as exc:
                log(f"fs-delete: cannot open the session dir: {exc}")
            for path in paths:
                parts = split_session_path(path)
                if parts is None:
                    refused.append({"path": path, "reason": "invalid"})
                    continue
                outcome = "error" if root_fd is None else delete_session_path(root_fd, parts)
                if outcome == "deleted":
                    deleted.append(path)
                elif outcome == "missing":
                    missing.append(path)
                else:
                    refused.append({"path": path, "reason": outcome})
            if root_fd is not None:
                os.close(root_fd)
            if any(p.split("/")[1:2] != [ARTIFACTS_NAME] for p in deleted):
                self.last_snapshot = None  # the host's deletes are not the code's
        self.send(
            {"ev": "fs-deleted", "id": request_id, "deleted": deleted, "missing": missing, "refused": refused}
        )

    def send_rejection(self, exec_id: str, name: str, value: str) -> None:
        """`done` for an exec that never ran; does not consume stateLost."""
        self.send(
            {
                "ev": "done",
                "id": exec_id,
                "status": "error",
                "stdout": "",
                "stderr": "",
                "truncated": False,
                "result": None,
                "error": {"name": name, "value": value, "traceback": ""},
                "stateLost": False,
                "durationMs": 0.0,
                "files": empty_change_report(),
                "artifacts": empty_artifacts_report(),
                "figures": [],
            }
        )

    # ------------------------------------------------------------------- execs

    def start_exec(self) -> None:
        cur, kernel = self.current, self.kernel
        assert cur is not None and kernel is not None and kernel.ready
        cur.state_lost, self.state_lost = self.state_lost, False
        cur.oom_before = read_oom_kills(self.oom_files)
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
        cur.deadline = cur.started + cur.timeout_ms / 1000.0
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

    def finish_exec(
        self,
        status: str,
        result: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
        result_truncated: bool = False,
        figures: list[str] | None = None,
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
        self.send(
            {
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
        if cur is None or cur.started is None:
            return  # written between execs (background children): dropped
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

    # ----------------------------------------------------------------- kernel

    def spawn_kernel(self) -> None:
        self.generation += 1
        command_r, command_w = os.pipe()
        result_r, result_w = os.pipe()
        stdout_r, stdout_w = os.pipe()
        stderr_r, stderr_w = os.pipe()
        env = dict(os.environ)
        env.setdefault("MPLBACKEND", "Agg")  # no display in a sandbox
        try:
            proc = subprocess.Popen(
                [sys.executable, KERNEL_PATH, str(command_r), str(result_w)],
                stdin=subprocess.DEVNULL,
                stdout=stdout_w,
                stderr=stderr_w,
                pass_fds=(command_r, result_w),
                cwd=self.session_dir,
                env=env,
                # Own session and process group: killpg reaches everything user code
                # spawned, and terminal/job-control signals never reach it.
                start_new_session=True,
            )
        except OSError as exc:
            for fd in (command_r, command_w, result_r, result_w):
                os.close(fd)
            for fd in (stdout_r, stdout_w, stderr_r, stderr_w):
                os.close(fd)
            log(f"cannot start the kernel: {exc}")
            raise Exit(1) from None
        for fd in (command_r, result_w, stdout_w, stderr_w):
            os.close(fd)
        for fd in (command_w, result_r, stdout_r, stderr_r):
            os.set_blocking(fd, False)
        try:
            pidfd: int | None = os.pidfd_open(proc.pid)
        except (AttributeError, OSError):
            pidfd = None  # fall back to polling in check_timers
        kernel = KernelProc(
            proc=proc,
            generation=self.generation,
            command_fd=command_w,
            result_fd=result_r,
            stdout_fd=stdout_r,
            stderr_fd=stderr_r,
            pidfd=pidfd,
            started_at=time.monotonic(),
        )
        gen = kernel.generation
        self.selector.register(result_r, selectors.EVENT_READ, ("result", gen))
        self.selector.register(stdout_r, selectors.EVENT_READ, ("stdout", gen))
        self.selector.register(stderr_r, selectors.EVENT_READ, ("stderr", gen))
        if pidfd is not None:
            self.selector.register(pidfd, selectors.EVENT_READ, ("pidfd", gen))
        self.kernel = kernel
        self.next_poll = time.monotonic() + EXIT_POLL_INTERVAL_S

    def send_command(self, kernel: KernelProc, message: dict[str, Any]) -> None:
        # Non-blocking with a backlog: a wedged kernel must never stall the loop
        # (pings, timeouts) just because the command pipe is full.
        kernel.pending = kernel.pending[kernel.pending_off :] + encode_frame(message)
        kernel.pending_off = 0
        self.flush_command(kernel)

    def flush_command(self, kernel: KernelProc) -> None:
        view = memoryview(kernel.pending)
        while kernel.pending_off < len(kernel.pending):
            try:
                kernel.pending_off += os.write(kernel.command_fd, view[kernel.pending_off :])
            except BlockingIOError:
                break
            except OSError:
                view.release()
                self.kernel_lost(kernel, "eof")
                return
        view.release()
        if kernel.pending_off >= len(kernel.pending):
            kernel.pending, kernel.pending_off = b"", 0
        want = kernel.pending_off < len(kernel.pending)
        if want != kernel.writing:
            if want:
                self.selector.register(
                    kernel.command_fd, selectors.EVENT_WRITE, ("command", kernel.generation)
                )
            else:
                self.selector.unregister(kernel.command_fd)
            kernel.writing = want

    def on_output_readable(self, kernel: KernelProc, name: str) -> None:
        fd = kernel.stdout_fd if name == "stdout" else kernel.stderr_fd
        try:
            data = os.read(fd, READ_CHUNK)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data:
            self.on_output(name, data)
            return
        # Every writer is gone (normally: the kernel died; its pidfd/result EOF says so).
        self.selector.unregister(fd)
        os.close(fd)
        if name == "stdout":
            kernel.stdout_fd = -1
        else:
            kernel.stderr_fd = -1

    def drain_output(self, kernel: KernelProc) -> None:
        """Read (without blocking) whatever the kernel's stdout/stderr pipes hold."""
        for name in ("stdout", "stderr"):
            fd = kernel.stdout_fd if name == "stdout" else kernel.stderr_fd
            if fd < 0:
                continue
            for _ in range(DRAIN_MAX_READS):
                try:
                    data = os.read(fd, READ_CHUNK)
                except OSError:  # BlockingIOError included: nothing more right now
                    break
                if not data:
                    break
                self.on_output(name, data)

    def on_result_readable(self, kernel: KernelProc) -> None:
        try:
            data = os.read(kernel.result_fd, READ_CHUNK)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self.kernel_lost(kernel, "eof")
            return
        self.on_result_bytes(kernel, data)

    def drain_results(self, kernel: KernelProc) -> None:
        """Consume result frames already written (used when the kernel has exited)."""
        while self.kernel is kernel:
            try:
                data = os.read(kernel.result_fd, READ_CHUNK)
            except OSError:
                return
            if not data:
                return
            self.on_result_bytes(kernel, data)

    def on_result_bytes(self, kernel: KernelProc, data: bytes) -> None:
        for frame in kernel.results.feed(data):
            if self.kernel is not kernel:
                return
            message: Any = None
            if frame is not FrameReader.OVERSIZE:
                try:
                    message = json.loads(frame)
                except ValueError:
                    message = None
            if not isinstance(message, dict):
                log("malformed frame from the kernel")
                self.kernel_lost(kernel, "garbage")
                return
            self.on_kernel_message(kernel, message)

    def on_kernel_message(self, kernel: KernelProc, message: dict[str, Any]) -> None:
        ev = message.get("ev")
        cur = self.current
        if ev == "ready" and not kernel.ready:
            kernel.ready = True
            self.start_failures = 0
            if not self.announced:
                self.announced = True
                self.send(
                    {
                        "ev": "ready",
                        "protocol": PROTOCOL_VERSION,
                        "python": "%d.%d.%d" % sys.version_info[:3],
                        "pid": os.getpid(),
                    }
                )
            if cur is not None and cur.started is None:
                self.start_exec()
        elif (
            ev == "result"
            and cur is not None
            and cur.started is not None
            and message.get("id") == cur.id
        ):
            self.on_result(kernel, message)
        else:
            # Out-of-sequence frames mean the channel cannot be trusted any more
            # (user code writing to the result fd, a forked copy of the kernel, ...).
            log(f"unexpected frame from the kernel: ev={ev!r}")
            self.kernel_lost(kernel, "garbage")

    def kill_strays(self, kernel: KernelProc) -> None:
        """SIGKILL every process in the kernel's group except the kernel itself.

        The group is stopped first so a fork bomb cannot outrun the /proc scan
        (Linux delivers a group signal to children forked concurrently as well).
        """
        pgid = kernel.pid
        try:
            os.killpg(pgid, signal.SIGSTOP)
        except (ProcessLookupError, PermissionError):
            return
        children: list[int] = []
        try:
            for _ in range(10):
                found = False
                for pid, ppid, pgrp in iter_processes():
                    if pgrp != pgid or pid == kernel.pid:
                        continue
                    found = True
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        continue
                    if ppid == kernel.pid and pid not in children:
                        children.append(pid)
                if not found:
                    break
        finally:
            try:
                os.killpg(pgid, signal.SIGCONT)
            except ProcessLookupError:
                pass
        if children:
            log(f"killed {len(children)} process(es) left by a timed-out exec")
            # Their zombies belong to the kernel; ask it to collect them.
            self.send_command(kernel, {"op": "reap", "pids": children})

    def kernel_lost(self, kernel: KernelProc, reason: str) -> None:
        """The kernel died or must die: kill its group, report, spawn a new one.

        reason: "exited" (process gone), "eof" (result/command pipe closed),
        "garbage" (unusable frame), "timeout" (grace after SIGINT expired),
        "startup" (never became ready).
        """
        if self.kernel is not kernel:
            return
        self.kernel = None
        natural_rc: int | None = None
        if reason in ("exited", "eof"):
            # A closed pipe can be seen just before the exit status is available.
            try:
                natural_rc = kernel.proc.wait(timeout=2.0 if reason == "exited" else 0.5)
            except subprocess.TimeoutExpired:
                natural_rc = None
        self.reap_kernel(kernel)
        cur = self.current
        if cur is not None and cur.started is not None:
            self.finish_exec(*self.death_status(cur, reason, natural_rc))
        if kernel.ready:
            self.state_lost = True
        else:
            self.start_failures += 1
            log(f"kernel failed to start ({reason}, exit status {natural_rc})")
            if self.start_failures >= KERNEL_START_ATTEMPTS:
                if cur is not None:
                    message = "the Python kernel could not be started"
                    error = {"name": "KernelStartFailed", "value": message, "traceback": ""}
                    self.finish_exec("killed", None, error)
                raise Exit(1)
        self.spawn_kernel()

    def death_status(
        self, cur: Exec, reason: str, rc: int | None
    ) -> tuple[str, None, dict[str, Any]]:
        if reason == "timeout":
            return "timeout", None, timeout_error(cur, "")
        if rc == -signal.SIGKILL:
            # SIGKILL we did not send: the memory cgroup's OOM killer if its counter moved.
            after = read_oom_kills(self.oom_files)
            if cur.oom_before is not None and after is not None and after > cur.oom_before:
                return "memory", None, {
                    "name": "OutOfMemory",
                    "value": "the sandbox ran out of memory and the Python process was killed",
                    "traceback": "",
                }
        if rc is None:
            what = "stopped responding on its control channel and was killed"
        elif rc < 0:
            try:
                what = f"was killed by {signal.Signals(-rc).name}"
            except ValueError:
                what = f"was killed by signal {-rc}"
        else:
            what = f"exited with status {rc}"
        error = {"name": "KernelDied", "value": f"the Python process {what}", "traceback": ""}
        return "killed", None, error

    def reap_kernel(self, kernel: KernelProc) -> None:
        """SIGKILL the kernel's whole process group, wait for the kernel, close fds."""
        for key in list(self.selector.get_map().values()):
            data = key.data
            if data[1] == kernel.generation:
                self.selector.unregister(key.fileobj)
        try:
            os.killpg(kernel.pid, signal.SIGKILL)  # pgid == kernel pid (own session)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            kernel.proc.wait(timeout=5.0)
        except subprocess.TimeoutExpired:
            log(f"kernel {kernel.pid} did not die after SIGKILL; abandoning it")
        # Whatever the dead processes wrote is still in the pipes.
        self.drain_output(kernel)
        fds = (kernel.command_fd, kernel.result_fd, kernel.stdout_fd, kernel.stderr_fd, kernel.pidfd)
        for fd in fds:
            if fd is not None and fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass

    def stop_kernel(self) -> None:
        kernel, self.kernel = self.kernel, None
        if kernel is not None:
            self.reap_kernel(kernel)


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


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


def on_terminate(signum: int, frame: Any) -> NoReturn:
    raise Exit(0)


def main() -> int:
    # The host channel is the original stdout. Keep it on a private fd and point fd 1
    # (and print/sys.stdout) at stderr, so a stray print here lands in the container
    # log instead of corrupting the frame stream. Likewise fd 0 becomes /dev/null.
    host_out = os.dup(1)
    host_in = os.dup(0)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    os.close(devnull)
    sys.stdout = sys.stderr
    make_undumpable()

    session_dir = os.environ.get("DRYDOCK_SESSION_DIR", "/session")
    try:
        grace_ms = float(os.environ.get("DRYDOCK_INTERRUPT_GRACE_MS", "1000"))
    except ValueError:
        grace_ms = 1000.0
    override = os.environ.get("DRYDOCK_OOM_COUNTER_FILE")  # for tests
    oom_files = (override,) if override else OOM_COUNTER_FILES

    signal.signal(signal.SIGTERM, on_terminate)
    signal.signal(signal.SIGINT, on_terminate)
    supervisor = Supervisor(host_in, host_out, session_dir, grace_ms / 1000.0, oom_files)
    return supervisor.run()


if __name__ == "__main__":
    sys.exit(main())
