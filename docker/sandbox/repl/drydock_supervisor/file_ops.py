"""File operations the host asks for: fs-delete (unlinks below the session dir that
never follow a symlink and never open the entry) and fs-read (regular files opened
without following a symlink, their bytes sent straight onto the host channel)."""

from __future__ import annotations

import errno
import os
import stat
from typing import Any

from .session_tree import kind_of

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



# ------------------------------------------------------------------ fs-read

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
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
    fds: list[int] = []
    dir_fd = root_fd
    try:
        for name in parts[:-1]:
            try:
                fd = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
            except FileNotFoundError:
                return "vanished"
            except OSError as exc:
                try:
                    st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
                except FileNotFoundError:
                    return "vanished"
                except OSError:
                    return "unreadable"
                if stat.S_ISLNK(st.st_mode):
                    return "symlink"
                if not stat.S_ISDIR(st.st_mode):
                    return "vanished"  # a file where a directory was: the path is gone
                return "unreadable" if isinstance(exc, PermissionError) else "other"
            fds.append(fd)
            dir_fd = fd
        name = parts[-1]
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
            if (st.st_dev, st.st_ino) != (before.st_dev, before.st_ino) or not stat.S_ISREG(st.st_mode):
                os.close(fd)
                return kind_of(st.st_mode) if not stat.S_ISREG(st.st_mode) else "vanished"
            if st.st_nlink > 1:
                os.close(fd)
                return "hardlink"  # like the listing and the change report: never taken
            if st.st_size > max_bytes:
                os.close(fd)
                return "too-large"
        except OSError:
            os.close(fd)
            return "unreadable"
        return fd, st.st_size
    finally:
        for fd in fds:
            os.close(fd)
