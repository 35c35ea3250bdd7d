"""File operations the host asks for (fs-delete): unlinks below the session dir that
never follow a symlink and never open the entry."""

from __future__ import annotations

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

