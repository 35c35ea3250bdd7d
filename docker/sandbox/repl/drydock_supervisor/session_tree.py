"""The session dir and its change tracking: lstat-level snapshots, their diff (the
`files` report of `done`), an inotify watch that spares the walk when nothing changed,
and the file-timestamp tick (see README.md, "files")."""

from __future__ import annotations

import ctypes
import errno
import os
import stat
import struct
import time
from dataclasses import dataclass, field
from typing import Any

from .framing import log

# Change report (see README): the walk of the session dir stops after this many entries.
SNAPSHOT_MAX_ENTRIES = 100_000
# Top-level entry of the session dir that the change report ignores (listed separately).
ARTIFACTS_NAME = "artifacts"
CLOCK_REALTIME_COARSE = getattr(time, "CLOCK_REALTIME_COARSE", 5)  # Linux value
# At most this long before an exec waits for the file-timestamp clock to tick (below).
SNAPSHOT_TICK_WAIT_S = 0.05

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

