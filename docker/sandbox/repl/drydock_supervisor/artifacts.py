"""The artifacts outbox: what <session>/artifacts holds at the end of an exec, listed
without following or opening anything (see README.md, "artifacts")."""

from __future__ import annotations

import os
import stat
from typing import Any

from .session_tree import ARTIFACTS_NAME, kind_of

# Artifacts listing (see README): the walk of <session>/artifacts stops after this many entries.
ARTIFACTS_MAX_ENTRIES = 10_000

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

