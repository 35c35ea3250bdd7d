"""File operations the host asks for: fs-delete (unlinks below the session dir that
never follow a symlink and never open the entry), fs-read (regular files opened
without following a symlink, their bytes sent straight onto the host channel) and
fs-write (files put in place below the session dir without following a symlink)."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from typing import Any

from .session_tree import kind_of

# ------------------------------------------------------------------ fs-delete

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def split_session_path(path: Any) -> list[str] | None:
    """Components of a "/a/b" session path, or None if it is not strictly inside."""
    if not isinstance(path, str) or not path.startswith("/") or "\0" in path:
        return None
    parts = [p for p in path.split("/") if p]
    if not parts or any(p in (".", "..") for p in parts):
        return None
    return parts


class _Refused(Exception):
    """A directory on the way cannot be entered: "missing" (absent, or not a directory),
    "symlink", "permission", "unstatable" (not even lstat says what it is) or "error"."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


@contextlib.contextmanager
def _parent_dir(root_fd: int, parts: list[str], create: bool = False) -> Iterator[int]:
    """An fd of the directory holding parts[-1], reached from root_fd by opening every
    component O_DIRECTORY|O_NOFOLLOW relative to the previous one: no symlink is ever
    followed, not even one swapped in meanwhile. `create`: a missing directory is made
    (mode 0755) and then opened the same way, so one swapped in between the two is
    refused too. Raises _Refused."""
    fds: list[int] = []
    dir_fd = root_fd
    try:
        for name in parts[:-1]:
            try:
                fd = _open_dir(name, dir_fd, create)
            except OSError as exc:
                if isinstance(exc, FileNotFoundError):
                    raise _Refused("missing") from None
                if exc.errno == errno.ELOOP:  # a symlink when it was opened
                    raise _Refused("symlink") from None
                try:
                    st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
                except FileNotFoundError:
                    raise _Refused("missing") from None
                except OSError:
                    raise _Refused("unstatable") from None
                if stat.S_ISLNK(st.st_mode):
                    raise _Refused("symlink") from None
                if not stat.S_ISDIR(st.st_mode):
                    raise _Refused("missing") from None  # a file where a directory would be
                if exc.errno == errno.ENOTDIR:
                    # Not a folder when it was opened (O_DIRECTORY|O_NOFOLLOW on a symlink
                    # says ENOTDIR), one now: swapped meanwhile.
                    raise _Refused("symlink") from None
                raise _Refused("permission" if isinstance(exc, PermissionError) else "error") from None
            fds.append(fd)
            dir_fd = fd
        yield dir_fd
    finally:
        for fd in fds:
            os.close(fd)


def _open_dir(name: str, dir_fd: int, create: bool) -> int:
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        if not create:
            raise
    try:
        os.mkdir(name, 0o755, dir_fd=dir_fd)
    except FileExistsError:
        pass  # made meanwhile: opened as anything else would be
    except PermissionError:
        raise _Refused("permission") from None
    except OSError as exc:
        raise _Refused("no-space" if exc.errno in (errno.ENOSPC, errno.EDQUOT) else "error") from None
    return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)


def delete_session_path(root_fd: int, parts: list[str]) -> str:
    """Unlink one file, symlink, FIFO or socket below root_fd, following no symlink.

    Unlinking never opens the entry, so a FIFO cannot block; directories are refused.

    Returns "deleted", "missing" or a refusal reason.
    """
    try:
        with _parent_dir(root_fd, parts) as dir_fd:
            return _delete_entry(dir_fd, parts[-1])
    except _Refused as refused:
        return "error" if refused.why == "unstatable" else refused.why


def _delete_entry(dir_fd: int, name: str) -> str:
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


# ------------------------------------------------------------------ fs-read

# O_NONBLOCK: should the entry turn into a FIFO between the lstat and the open, opening
# it does not wait for a writer (the fstat after it refuses it).
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def open_session_file(root_fd: int, parts: list[str], max_bytes: int) -> tuple[int, int] | str:
    """Open one regular file below root_fd for reading, following no symlink.

    Returns (fd, size), or why not, in the host's words (ReadSkipReason): "vanished",
    "symlink", "hardlink", "fifo", "device", "socket", "directory", "other",
    "unreadable" or "too-large". Only an entry that lstat shows as a regular file is
    opened (opening a device or a FIFO could have effects), and the open file must be
    that same inode: an entry swapped meanwhile is refused, never read.
    """
    try:
        with _parent_dir(root_fd, parts) as dir_fd:
            return _open_entry(dir_fd, parts[-1], max_bytes)
    except _Refused as refused:
        # In the host's words: a path that is gone, or a folder it cannot read.
        reasons = {"missing": "vanished", "symlink": "symlink", "permission": "unreadable", "unstatable": "unreadable"}
        return reasons.get(refused.why, "other")


def _open_entry(dir_fd: int, name: str, max_bytes: int) -> tuple[int, int] | str:
    try:
        before = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return "vanished"
    except OSError:
        return "unreadable"
    kind = kind_of(before.st_mode)
    if kind != "file":
        return kind
    try:
        fd = os.open(name, _FILE_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        return "vanished"
    except PermissionError:
        return "unreadable"
    except OSError as exc:
        # ELOOP: swapped for a symlink after the lstat (O_NOFOLLOW refuses it).
        return "symlink" if exc.errno == errno.ELOOP else "other"
    try:
        st = os.fstat(fd)
    except OSError:
        os.close(fd)
        return "unreadable"
    if not stat.S_ISREG(st.st_mode):
        refusal = kind_of(st.st_mode)
    elif (st.st_dev, st.st_ino) != (before.st_dev, before.st_ino):
        refusal = "vanished"
    elif st.st_nlink > 1:
        refusal = "hardlink"  # like the listing and the change report: never taken
    elif st.st_size > max_bytes:
        refusal = "too-large"
    else:
        return fd, st.st_size
    os.close(fd)
    return refusal


# ------------------------------------------------------------------ fs-write

FILE_MODE = 0o644
# A new name in the target's folder, never an existing entry (O_EXCL), never through a
# symlink (O_NOFOLLOW); renamed over the target once complete, so code never sees a
# half-written file and an entry planted at the target (a symlink, a hard link to
# another file) is replaced, not written through.
_NEW_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_TEMP_PREFIX = ".drydock-in-"


class IncomingFile:
    """One file of an fs-write whose bytes are arriving: a new file in the target's
    folder, renamed over the target by ``finish``. ``refusal`` says why not, in the
    host's words (WriteRefusal): "symlink" (a link on the way), "not-a-directory" (a file
    where a folder would be), "directory" (a folder at the target), "no-space", "permission"
    or "error"; its bytes are then dropped as they arrive."""

    _counter = 0

    def __init__(self, root_fd: int, parts: list[str], mtime_ns: int) -> None:
        self.refusal: str | None = None
        self.dir_fd: int | None = None
        self.fd: int | None = None
        self.name = parts[-1]
        self.temp = ""
        self.mtime_ns = mtime_ns
        stack = contextlib.ExitStack()
        try:
            dir_fd = stack.enter_context(_parent_dir(root_fd, parts, create=True))
            self.dir_fd = os.dup(dir_fd)
        except _Refused as refused:
            self.refusal = {"missing": "not-a-directory", "unstatable": "error"}.get(refused.why, refused.why)
            return
        finally:
            stack.close()
        while self.fd is None:
            IncomingFile._counter += 1
            self.temp = f"{_TEMP_PREFIX}{os.getpid()}-{IncomingFile._counter}"
            try:
                self.fd = os.open(self.temp, _NEW_FILE_FLAGS, FILE_MODE, dir_fd=self.dir_fd)
            except FileExistsError:
                continue  # planted by code: another name
            except OSError as exc:
                self._fail(exc)
                return

    def write(self, data: memoryview) -> None:
        while data and self.fd is not None:
            try:
                data = data[os.write(self.fd, data) :]
            except OSError as exc:
                self._fail(exc)

    def finish(self) -> str | None:
        """Puts the file in place; returns the refusal, or None once it is there."""
        if self.fd is not None:
            try:
                os.fchmod(self.fd, FILE_MODE)
                os.utime(self.fd, ns=(self.mtime_ns, self.mtime_ns))
                os.rename(self.temp, self.name, src_dir_fd=self.dir_fd, dst_dir_fd=self.dir_fd)
                self.temp = ""
            except OSError as exc:
                self._fail(exc)
        self.close()
        return self.refusal

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
        if self.dir_fd is not None:
            if self.temp:
                with contextlib.suppress(OSError):
                    os.unlink(self.temp, dir_fd=self.dir_fd)
            os.close(self.dir_fd)
            self.dir_fd = None

    def _fail(self, exc: OSError) -> None:
        if self.refusal is None:
            self.refusal = _write_refusal(exc)
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def _write_refusal(exc: OSError) -> str:
    if exc.errno in (errno.EISDIR, errno.ENOTEMPTY, errno.EEXIST):
        return "directory"
    if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        return "no-space"
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return "permission"
    if exc.errno == errno.ELOOP:
        return "symlink"
    if exc.errno == errno.ENOTDIR:
        return "not-a-directory"
    return "error"
