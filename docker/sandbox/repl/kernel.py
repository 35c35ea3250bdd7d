#!/usr/bin/env python3
"""Drydock REPL kernel: runs user code in one persistent namespace.

Started by supervisor.py as ``kernel.py <command-fd> <result-fd>`` with fd 0 = /dev/null,
fd 1 / fd 2 = pipes the supervisor reads (user stdout / stderr), and two private pipes:
commands arrive on <command-fd> and results leave on <result-fd>, both as 4-byte
big-endian length + UTF-8 JSON frames. User code and everything it spawns can write to
fd 1 / fd 2 freely: those bytes are only ever treated as output, never as protocol.

Commands:   {"op": "exec", "id": str, "code": str, "maxOutputBytes": int,
             "captureFigures": bool}        (optional, default true)
            {"op": "reap", "pids": [int]}   (collect children the supervisor killed)
Replies:    {"ev": "ready", "pid": int}     (once, at start)
            {"ev": "result", "id": str, "status": "ok" | "error",
             "result": {"text": str, "html": str | None[, "png": str]} | {"png": str} | None,
             "error": {"name": str, "value": str, "traceback": str} | None,
             "truncated": bool,
             "figures": [str]}              (saved figures, "/artifacts/figure-<n>.png")

After every cell, open matplotlib figures are saved to <session>/artifacts/ and closed,
but only if user code already imported matplotlib.pyplot (see _capture_figures).

With PYTHONUSERBASE set, the user site-packages is created and put on sys.path at start,
and what is installed into it is importable from the next cell on (see _UserSite).

Standard library only: this runs inside the sandbox image before any user package.
"""

import ast
import base64
import builtins
import io
import json
import linecache
import os
import signal
import struct
import sys
import time
import traceback
import types
from typing import Any, NoReturn

_HEADER = struct.Struct(">I")
# A command carries user code, which the host caps at 16 MiB; leave room for JSON escaping.
_MAX_COMMAND_FRAME = 96 * 1024 * 1024
# Error text is not covered by the output cap, so bound it separately.
_ERROR_TEXT_CAP = 64 * 1024
# Figures captured after a cell go to <session>/<_ARTIFACTS_NAME>/figure-<n>.png.
_ARTIFACTS_NAME = "artifacts"
# Longest figure-capture error line written to the cell's stderr.
_CAPTURE_ERROR_CAP = 500
# Exit code when the kernel can no longer talk to the supervisor safely (lost or
# hijacked private fds). The supervisor sees the exit and respawns a fresh kernel.
_EXIT_CHANNEL_BROKEN = 70

# Frames from this file are kernel internals and are cut from user tracebacks.
_KERNEL_FILE = (lambda: None).__code__.co_filename


def _die() -> NoReturn:
    os._exit(_EXIT_CHANNEL_BROKEN)


def _cap_text(text: str, limit: int) -> tuple[str, bool]:
    """Cut ``text`` to at most ``limit`` UTF-8 bytes (on a character boundary)."""
    if len(text) * 4 <= limit:  # fast path: cannot exceed the limit even if all 4-byte
        return text, False
    encoded = text.encode("utf-8", "replace")
    if len(encoded) <= limit:
        return text, False
    return encoded[: max(limit, 0)].decode("utf-8", "ignore"), True


def _clean(text: str) -> str:
    """Replace lone surrogates so the text can always be encoded as UTF-8 JSON."""
    return text.encode("utf-8", "replace").decode("utf-8")


def _safe_str(obj: object) -> str:
    try:
        return str(obj)
    except BaseException:  # noqa: BLE001 - a user __str__ may raise anything
        return f"<unprintable {type(obj).__name__} object>"


class _FdWriter(io.RawIOBase):
    """Raw writer on a numbered fd that never closes it.

    ``discard`` lets the kernel throw away bytes stuck in the buffer above it after a
    failed flush (e.g. user code closed fd 1 mid-cell), so they do not leak into the
    output of a later cell.
    """

    def __init__(self, fd: int) -> None:
        super().__init__()
        self._fd = fd
        self.discard = False

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def write(self, data: Any) -> int:  # type: ignore[override]
        if self.discard:
            return len(data)
        return os.write(self._fd, data)


class _StreamingText(io.TextIOWrapper):
    """Text stream that hands every write to the pipe at once.

    Output must reach the host while a cell is still running, including partial lines
    (``print("x", end="")``) and progress loops, so nothing may linger in a buffer.
    """

    def write(self, s: str) -> int:  # type: ignore[override]
        n = super().write(s)
        self.flush()
        return n


def _make_stream(fd: int) -> tuple[_FdWriter, _StreamingText]:
    raw = _FdWriter(fd)
    text = _StreamingText(
        io.BufferedWriter(raw),
        encoding="utf-8",
        errors="backslashreplace",
        write_through=True,
    )
    return raw, text


def _strip_internal_frames(te: traceback.TracebackException) -> None:
    """Remove kernel frames from a TracebackException and everything chained to it."""
    seen: set[int] = set()
    todo: list[traceback.TracebackException | None] = [te]
    while todo:
        cur = todo.pop()
        if cur is None or id(cur) in seen:
            continue
        seen.add(id(cur))
        cur.stack = traceback.StackSummary.from_list(
            [frame for frame in cur.stack if frame.filename != _KERNEL_FILE]
        )
        todo.append(cur.__cause__)
        todo.append(cur.__context__)
        todo.extend(getattr(cur, "exceptions", None) or [])  # ExceptionGroup members


class Kernel:
    def __init__(self, command_fd: int, result_fd: int) -> None:
        self._command_fd = command_fd
        self._result_fd = result_fd
        self._pid = os.getpid()
        # Private copies of the output pipes and of /dev/null: user code may close or
        # redirect fd 0/1/2, and they are put back from these before every cell.
        self._stdout_fd = os.dup(1)
        self._stderr_fd = os.dup(2)
        self._devnull_fd = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
        private = (command_fd, result_fd, self._stdout_fd, self._stderr_fd, self._devnull_fd)
        for fd in private:
            os.set_inheritable(fd, False)  # processes the user spawns must not get them
        # (st_dev, st_ino) of each private fd, to notice a closed fd whose number was
        # reused by something the user opened.
        self._identity = {fd: self._fd_identity(fd) for fd in private}
        self._streams: dict[int, tuple[_FdWriter, _StreamingText]] = {}
        # Python's own stdio objects: kept referenced so they are never collected.
        self._original_stdio = (sys.stdin, sys.stdout, sys.stderr)
        self._cell = 0
        # The supervisor starts the kernel in the session dir; user code may chdir later.
        try:
            self._session_dir = os.getcwd()
        except OSError:
            self._session_dir = os.environ.get("DRYDOCK_SESSION_DIR", "/session")
        # Set whenever SIGINT (the supervisor's timeout) arrives; reset per cell.
        self._sigint_seen = False
        # SIGINT (the supervisor's timeout) may only interrupt user code, never the
        # kernel's own bookkeeping or its idle wait for the next command.
        self._in_user_code = False

        # The persistent user namespace is a real module registered as __main__, so
        # pickling user classes and `import __main__` behave as in a notebook.
        self._kernel_module = sys.modules.get("__main__")
        main = types.ModuleType("__main__")
        main.__dict__["__builtins__"] = builtins
        sys.modules["__main__"] = main
        self.namespace: dict[str, Any] = main.__dict__

        # User modules in the session dir (the cwd) are importable; this directory isn't.
        if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(_KERNEL_FILE):
            sys.path[0] = ""
        sys.argv = [""]
        os.environ.setdefault("MPLBACKEND", "Agg")
        # Packages `pip install`ed during the session (PYTHONUSERBASE): importable at once.
        self._user_site = _UserSite.enable()

    # ----------------------------------------------------------------- channel

    @staticmethod
    def _fd_identity(fd: int) -> tuple[int, int]:
        st = os.fstat(fd)
        return st.st_dev, st.st_ino

    def _check_private_fds(self) -> None:
        for fd, identity in self._identity.items():
            try:
                if self._fd_identity(fd) != identity:
                    _die()
                os.set_inheritable(fd, False)
            except OSError:
                _die()

    def _read_exact(self, n: int) -> bytes | None:
        chunks: list[bytes] = []
        remaining = n
        while remaining:
            try:
                chunk = os.read(self._command_fd, min(remaining, 1 << 20))
            except OSError:
                _die()
            if not chunk:
                return None
            chunks.append(chunk)
            remaining -= len(chunk)
        return b"".join(chunks)

    def _receive(self) -> dict[str, Any] | None:
        header = self._read_exact(_HEADER.size)
        if header is None:
            return None
        (length,) = _HEADER.unpack(header)
        if length > _MAX_COMMAND_FRAME:
            _die()
        body = self._read_exact(length)
        if body is None:
            return None
        try:
            message = json.loads(body)
        except ValueError:
            _die()
        if not isinstance(message, dict):
            _die()
        return message

    def _send(self, message: dict[str, Any]) -> None:
        self._check_private_fds()
        body = json.dumps(message, ensure_ascii=False).encode("utf-8", "replace")
        data = memoryview(_HEADER.pack(len(body)) + body)
        try:
            while data:
                data = data[os.write(self._result_fd, data):]
        except OSError:
            _die()

    # --------------------------------------------------------------- main loop

    def serve(self) -> NoReturn:
        try:
            with open("/proc/self/oom_score_adj", "w") as f:
                # Make the kernel (and what it spawns) the OOM killer's first choice,
                # so a memory-hungry cell never takes the supervisor down with it.
                f.write("1000")
        except OSError:
            pass
        signal.signal(signal.SIGINT, self._on_sigint)
        self._send({"ev": "ready", "pid": self._pid})
        while True:
            message = self._receive()
            if message is None:  # supervisor went away
                os._exit(0)
            op = message.get("op")
            if op == "exec":
                self._send(self._execute(message))
            elif op == "reap":
                self._reap(message.get("pids") or [])

    def _refresh_user_site(self, user_site: "_UserSite") -> None:
        """What the previous cells installed into the user site, visible to this one.
        Its .pth files run import lines: user code, interruptible like a cell."""
        try:
            self._in_user_code = True
            try:
                user_site.refresh()
            finally:
                self._in_user_code = False
                if os.getpid() != self._pid:
                    os._exit(0)
        except BaseException:  # noqa: BLE001 - a broken .pth must not cost the cell
            pass

    def _on_sigint(self, signum: int, frame: types.FrameType | None) -> None:
        self._sigint_seen = True
        if self._in_user_code:
            raise KeyboardInterrupt

    def _reap(self, pids: list[Any]) -> None:
        """Collect children the supervisor killed after a timeout (no zombies left)."""
        pending = {pid for pid in pids if isinstance(pid, int)}
        deadline = time.monotonic() + 1.0
        while pending and time.monotonic() < deadline:
            for pid in list(pending):
                try:
                    reaped, _ = os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    reaped = pid  # not ours, or already collected
                if reaped:
                    pending.discard(pid)
            if pending:
                time.sleep(0.01)

    # ------------------------------------------------------------------ stdio

    def _restore_stdio(self) -> None:
        """Undo whatever the previous cell did to fd 0/1/2 and sys.std*."""
        self._check_private_fds()
        os.dup2(self._devnull_fd, 0)
        os.dup2(self._stdout_fd, 1)
        os.dup2(self._stderr_fd, 2)
        for fd, name in ((1, "stdout"), (2, "stderr")):
            stream = self._streams.get(fd)
            if stream is None or stream[1].closed:
                stream = self._streams[fd] = _make_stream(fd)
            setattr(sys, name, stream[1])
            setattr(sys, f"__{name}__", stream[1])
        stdin = sys.stdin
        if stdin is None or getattr(stdin, "closed", True):
            sys.stdin = sys.__stdin__ = open(0, "r", closefd=False)  # noqa: SIM115

    def _flush_stdio(self) -> None:
        """Push all pending output into the pipes before the result frame is sent."""
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()  # may be an object the user installed
            except BaseException:  # noqa: BLE001
                pass
        for raw, text in self._streams.values():
            if text.closed:
                continue
            try:
                text.flush()
            except BaseException:  # noqa: BLE001 - fd closed under us: drop the bytes
                raw.discard = True
                try:
                    text.flush()
                except BaseException:  # noqa: BLE001
                    pass
                raw.discard = False

    # ------------------------------------------------------------------ cells

    def _execute(self, message: dict[str, Any]) -> dict[str, Any]:
        code = message.get("code")
        cap = message.get("maxOutputBytes")
        if not isinstance(cap, int) or cap < 0:
            cap = 1 << 20
        self._restore_stdio()
        # The user may have installed their own SIGINT handler or blocked the signal.
        signal.signal(signal.SIGINT, self._on_sigint)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        self._sigint_seen = False
        if self._user_site is not None:
            self._refresh_user_site(self._user_site)
        try:
            outcome = self._run_cell(code if isinstance(code, str) else "", cap)
        except KeyboardInterrupt as exc:  # SIGINT landed while leaving user code
            outcome = self._error(exc)
        figures: list[str] = []
        # After a timeout's SIGINT the supervisor only waits a short grace for this
        # reply: rendering figures then could get the kernel (and its state) killed,
        # so they stay open and are captured after the next cell.
        if message.get("captureFigures", True) is not False and not self._sigint_seen:
            figures, png = self._capture_figures()
            if png is not None:
                self._attach_png(outcome, png, cap)
        outcome["figures"] = figures
        self._flush_stdio()
        return {"ev": "result", "id": message.get("id"), **outcome}

    # ---------------------------------------------------------------- figures

    def _capture_figures(self) -> tuple[list[str], bytes | None]:
        """Save every open pyplot figure as artifacts/figure-<n>.png, then close it.

        Only when user code imported matplotlib.pyplot: the kernel never imports it
        (that alone costs ~0.5 s). Returns the saved paths (relative to the session
        dir, leading "/") and the PNG bytes of the last one. Never raises: failures are
        reported as one line each on the cell's stderr. Rendering runs user code
        (artists, callbacks), so it is interruptible like a cell: a timeout's SIGINT
        stops the capture and leaves the remaining figures open.
        """
        plt = sys.modules.get("matplotlib.pyplot")
        if plt is None:
            return [], None
        try:
            nums = list(plt.get_fignums())
        except Exception as exc:  # noqa: BLE001 - e.g. a module the user swapped in
            self._capture_error("cannot list the open figures", exc)
            return [], None
        if not nums:
            return [], None
        try:
            dir_fd = self._open_artifacts_dir()
        except OSError as exc:
            self._capture_error(f"cannot use {self._session_dir}/{_ARTIFACTS_NAME}", exc)
            return [], None
        saved: list[str] = []
        last: bytes | None = None
        try:
            taken = set(os.listdir(dir_fd))
            n = 0
            for num in nums:
                try:
                    try:
                        self._in_user_code = True
                        buf = io.BytesIO()
                        plt.figure(num).savefig(buf, format="png")
                        data = buf.getvalue()
                    finally:
                        self._in_user_code = False
                        if os.getpid() != self._pid:
                            os._exit(0)  # forked by a user callback: not a second kernel
                except KeyboardInterrupt:
                    self._capture_error("interrupted; the remaining figures stay open")
                    break
                except BaseException as exc:  # noqa: BLE001 - user artists may raise anything
                    self._capture_error(f"cannot render figure {num}", exc)
                    self._close_figure(plt, num)  # or it fails again after every cell
                    continue
                name, n = self._write_new_figure(dir_fd, taken, n, data)
                if name is not None:
                    saved.append(f"/{_ARTIFACTS_NAME}/{name}")
                    last = data
                self._close_figure(plt, num)
        except OSError as exc:
            self._capture_error("cannot list the artifacts folder", exc)
        finally:
            os.close(dir_fd)
        return saved, last

    def _open_artifacts_dir(self) -> int:
        """fd of <session>/artifacts, created if missing; never through a symlink."""
        path = os.path.join(self._session_dir, _ARTIFACTS_NAME)
        flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            return os.open(path, flags)
        except FileNotFoundError:
            pass
        try:
            os.mkdir(path)  # default mode (umask applies)
        except FileExistsError:
            pass
        return os.open(path, flags)

    def _write_new_figure(
        self, dir_fd: int, taken: set[str], n: int, data: bytes
    ) -> tuple[str | None, int]:
        """Write data to the first free figure-<m>.png with m > n; never overwrites."""
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        while True:
            n += 1
            name = f"figure-{n}.png"
            if name in taken:
                continue
            try:
                fd = os.open(name, flags, 0o666, dir_fd=dir_fd)
            except FileExistsError:  # created since the listing (e.g. a background job)
                continue
            except OSError as exc:
                self._capture_error(f"cannot create {_ARTIFACTS_NAME}/{name}", exc)
                return None, n
            break
        taken.add(name)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        except OSError as exc:
            self._capture_error(f"cannot write {_ARTIFACTS_NAME}/{name}", exc)
            try:
                os.unlink(name, dir_fd=dir_fd)
            except OSError:
                pass
            return None, n
        finally:
            os.close(fd)
        return name, n

    def _close_figure(self, plt: Any, num: Any) -> None:
        try:
            plt.close(num)
        except Exception as exc:  # noqa: BLE001 - close callbacks are user code
            self._capture_error(f"cannot close figure {num}", exc)

    def _capture_error(self, what: str, exc: BaseException | None = None) -> None:
        """One line on the cell's stderr (the private copy of the stderr pipe)."""
        line = f"drydock: figure capture: {what}"
        if exc is not None:
            line += f": {type(exc).__name__}: {_safe_str(exc)}"
        line = " ".join(_clean(line).split())  # exactly one line
        line = _cap_text(line, _CAPTURE_ERROR_CAP)[0] + "\n"
        self._flush_stdio()  # after whatever the cell itself wrote
        data = memoryview(line.encode("utf-8"))
        try:
            while data:
                data = data[os.write(self._stderr_fd, data):]
        except OSError:
            pass

    @staticmethod
    def _attach_png(outcome: dict[str, Any], png: bytes, cap: int) -> None:
        """Show the last figure as the cell's result, as a notebook does.

        A value's own png (none today) wins. Base64 over the output cap is left out
        (the file is still in artifacts/), which sets `truncated` like oversized HTML.
        """
        result = outcome.get("result")
        if isinstance(result, dict) and result.get("png") is not None:
            return
        if (len(png) + 2) // 3 * 4 > cap:
            outcome["truncated"] = True
            return
        encoded = base64.b64encode(png).decode("ascii")
        if isinstance(result, dict):
            result["png"] = encoded
        else:
            outcome["result"] = {"png": encoded}

    def _run_cell(self, code: str, cap: int) -> dict[str, Any]:
        self._cell += 1
        # A distinct file name per cell keeps the source lines of functions defined in
        # earlier cells correct in later tracebacks. mtime None: linecache keeps it.
        filename = f"<cell-{self._cell}>"
        linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
        try:
            tree = ast.parse(code, filename, "exec")
            last: ast.Expression | None = None
            if tree.body and isinstance(tree.body[-1], ast.Expr):
                last = ast.Expression(tree.body.pop().value)
            body_code = compile(tree, filename, "exec", dont_inherit=True)
            last_code = (
                compile(last, filename, "eval", dont_inherit=True) if last is not None else None
            )
        except (SyntaxError, ValueError, OverflowError, MemoryError, RecursionError) as exc:
            return self._error(exc, compile_error=True)

        try:
            self._in_user_code = True
            try:
                exec(body_code, self.namespace)
                value = eval(last_code, self.namespace) if last_code is not None else None
                result, truncated = self._format_result(value, cap)  # repr is user code too
            finally:
                self._in_user_code = False
                if os.getpid() != self._pid:
                    # A process forked by user code must not carry on as a second kernel.
                    os._exit(0)
        except BaseException as exc:  # noqa: BLE001 - SystemExit, KeyboardInterrupt too
            return self._error(exc)
        return {"status": "ok", "result": result, "error": None, "truncated": truncated}

    @staticmethod
    def _format_result(value: Any, cap: int) -> tuple[dict[str, Any] | None, bool]:
        if value is None:
            return None, False
        text, truncated = _cap_text(_clean(repr(value)), cap)
        html: str | None = None
        if not isinstance(value, type):  # a class's _repr_html_ is an unbound method
            try:
                method = getattr(value, "_repr_html_", None)
                out = method() if callable(method) else None
                html = _clean(out) if isinstance(out, str) else None
            except Exception:  # noqa: BLE001 - a broken _repr_html_ just means no HTML
                html = None
        if html is not None and len(html.encode("utf-8")) > cap:
            html, truncated = None, True  # half an HTML document is worse than none
        return {"text": text, "html": html}, truncated

    def _error(self, exc: BaseException, compile_error: bool = False) -> dict[str, Any]:
        name = type(exc).__name__
        value = _safe_str(exc)
        try:
            if compile_error:
                # The frames are ours (ast/compile); show only the error with its caret.
                lines = traceback.format_exception_only(type(exc), exc)
            else:
                te = traceback.TracebackException(
                    type(exc), exc, exc.__traceback__, compact=True
                )
                _strip_internal_frames(te)
                lines = list(te.format())
            tb = "".join(lines)
        except BaseException:  # noqa: BLE001
            tb = f"{name}: {value}\n"
        if not compile_error:
            # Like the interactive interpreter: lets `import pdb; pdb.pm()` work.
            sys.last_type, sys.last_value, sys.last_traceback = type(exc), exc, exc.__traceback__
        return {
            "status": "error",
            "result": None,
            "error": {
                "name": name,
                "value": _cap_text(_clean(value), _ERROR_TEXT_CAP)[0],
                "traceback": _cap_text(_clean(tb), _ERROR_TEXT_CAP)[0],
            },
            "truncated": False,
        }


# --------------------------------------------------------------------- user site


class _UserSite:
    """The user site-packages (PYTHONUSERBASE, where `pip install` with PIP_USER=1 puts
    packages), importable in the session that installs into it, without a restart.

    Python adds the user site at start only if it exists then, and never in the zygote
    (its real and effective uids differ), so each kernel does it itself, once it is the
    plain sandbox user: it puts the folder on sys.path where Python would have (before
    the system's site-packages), existing or not (the import system remembers a folder
    it found missing, which `refresh` makes it forget). Before each cell,
    `refresh` makes sure what was installed since is found: the folder's FileFinder is
    told to list it again (it notices changes by the folder's mtime alone, which can
    miss one made in the same clock tick as its last listing; this costs one listdir
    of the user site on the next import that gets that far), and .pth files that
    appeared are processed as at start.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self._mtime_ns: int | None = None
        self._pth: set[str] = set()

    @classmethod
    def enable(cls) -> "_UserSite | None":
        if not os.environ.get("PYTHONUSERBASE") or sys.flags.no_user_site:
            return None
        try:
            import site

            path = site.getusersitepackages()
        except Exception:  # noqa: BLE001
            return None
        # Not created here: a recycled sandbox's packages folder must stay empty for the
        # check after the new kernel starts. pip creates it; `refresh` then finds it.
        user_site = cls(path)
        try:
            if path not in sys.path:
                site.addsitedir(path)  # appends it, then what its .pth files add
                system = set(site.getsitepackages()) if hasattr(site, "getsitepackages") else set()
                sys.path.remove(path)
                index = next((i for i, entry in enumerate(sys.path) if entry in system), len(sys.path))
                sys.path.insert(index, path)
            site.ENABLE_USER_SITE = True  # as for any process of the plain sandbox user
            user_site._watch_while_missing()
            user_site._note_pth()
        except Exception:  # noqa: BLE001
            pass
        return user_site

    def _watch_while_missing(self) -> None:
        """While the folder does not exist, the import system would remember it as missing
        (None) until the next cell's refresh: `pip install x; import x` in one cell would
        fail. A FileFinder of its own for it instead: it finds nothing while the folder is
        missing and lists it as soon as it appears (its mtime changed from none)."""
        if os.path.isdir(self.path):
            return
        from importlib.machinery import (
            BYTECODE_SUFFIXES,
            EXTENSION_SUFFIXES,
            SOURCE_SUFFIXES,
            ExtensionFileLoader,
            FileFinder,
            SourceFileLoader,
            SourcelessFileLoader,
        )

        sys.path_importer_cache[self.path] = FileFinder(
            self.path,
            (ExtensionFileLoader, EXTENSION_SUFFIXES),
            (SourceFileLoader, SOURCE_SUFFIXES),
            (SourcelessFileLoader, BYTECODE_SUFFIXES),
        )

    def _note_pth(self) -> list[str]:
        """The .pth files not seen yet (when the folder changed since last asked)."""
        try:
            mtime_ns = os.stat(self.path).st_mtime_ns
        except OSError:
            return []
        if mtime_ns == self._mtime_ns:
            return []
        self._mtime_ns = mtime_ns
        try:
            names = {name for name in os.listdir(self.path) if name.endswith(".pth") and not name.startswith(".")}
        except OSError:
            return []
        new = sorted(names - self._pth)
        self._pth |= names
        return new

    def refresh(self) -> None:
        cache = sys.path_importer_cache
        if self.path in cache:
            finder = cache[self.path]
            if finder is None:  # looked up while missing: look it up again
                del cache[self.path]
            elif hasattr(finder, "invalidate_caches"):
                finder.invalidate_caches()
        new = self._note_pth()
        if new:
            import site

            for name in new:
                site.addpackage(self.path, name, None)


# ------------------------------------------------------------------------ zygote
# `kernel.py --zygote <ctl-fd>`: started once by the supervisor, forks every later kernel
# (see drydock_supervisor/zygote.py for why and for the channel). It never runs user
# code: a forked kernel starts from a clean interpreter.


def _zygote(ctl_fd: int) -> NoReturn:
    import selectors
    import socket

    ctl = socket.socket(fileno=ctl_fd)
    # exec set our saved ids to the effective (sandbox) ones; put them back to the real
    # (supervisor) ones, as the supervisor's are, so user code cannot signal us.
    ruid, euid, _suid = os.getresuid()
    rgid, egid, _sgid = os.getresgid()
    if ruid != euid:
        os.setresgid(rgid, egid, rgid)
        os.setresuid(ruid, euid, ruid)
    _make_undumpable()
    for name in (os.environ.get("DRYDOCK_ZYGOTE_PRELOAD") or "").split(","):
        if name.strip():
            try:
                __import__(name.strip())
            except BaseException as exc:  # noqa: BLE001 - a missing module only costs speed
                sys.stderr.write(f"drydock-zygote: cannot preload {name.strip()}: {exc}\n")
    # With the two-user layout (real uid != effective uid), each kernel becomes the
    # plain sandbox user; otherwise it keeps our single user.
    sandbox = os.geteuid() if os.getuid() != os.geteuid() else None
    wanted = os.environ.get("DRYDOCK_SANDBOX_UID")
    if sandbox is None and wanted is not None and str(os.getuid()) != wanted:
        # The layout was asked for but exec did not keep it: gVisor's execve sets the
        # effective ids to the real ones, so this process is the supervisor's user only
        # and could not make its kernels the sandbox user. It must not fork any: the
        # supervisor starts kernels the old way, as the sandbox user before exec.
        ctl.send(json.dumps({"ev": "unavailable", "reason": f"exec left uid {os.getuid()} without the sandbox user's effective id"}).encode())
        os._exit(0)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    sys.stdout.flush()
    sys.stderr.flush()
    ctl.send(b'{"ev":"ready"}')
    selector = selectors.DefaultSelector()
    selector.register(ctl, selectors.EVENT_READ, "ctl")
    selector.register(wake_r, selectors.EVENT_READ, "child")
    while True:
        for key, _mask in selector.select():
            if key.data == "ctl":
                try:
                    message, fds, _flags, _addr = socket.recv_fds(ctl, 4096, 4)
                except InterruptedError:
                    continue
                if not message:
                    os._exit(0)  # the supervisor is gone
                try:
                    request = json.loads(message)
                except ValueError:
                    request = None
                if not isinstance(request, dict) or request.get("op") != "fork" or len(fds) != 4:
                    for fd in fds:
                        os.close(fd)
                    continue
                pid = os.fork()
                if pid == 0:
                    _zygote_child(fds, request.get("cwd"), ctl, (wake_r, wake_w), sandbox)
                for fd in fds:
                    os.close(fd)
                ctl.send(json.dumps({"ev": "forked", "pid": pid}).encode())
            else:
                try:
                    while os.read(wake_r, 4096):
                        pass
                except BlockingIOError:
                    pass
                while True:
                    try:
                        pid, status = os.waitpid(-1, os.WNOHANG)
                    except ChildProcessError:
                        break
                    if pid == 0:
                        break
                    code = os.waitstatus_to_exitcode(status)
                    ctl.send(json.dumps({"ev": "exit", "pid": pid, "code": code}).encode())


def _zygote_child(fds: list[int], cwd: Any, ctl: Any, wake: tuple[int, int], sandbox: int | None) -> NoReturn:
    """The forked kernel: its own session, the supervisor's pipes as its fds, the plain
    sandbox user, fresh randomness; then it serves like a kernel started by exec."""
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        command_r, result_w, stdout_w, stderr_w = fds
        os.setsid()
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(stdout_w, 1)
        os.dup2(stderr_w, 2)
        ctl.close()
        keep = {0, 1, 2, command_r, result_w}
        for name in os.listdir("/proc/self/fd"):
            fd = int(name)
            if fd not in keep:
                try:
                    os.close(fd)
                except OSError:
                    pass
        if sandbox is not None:
            os.setregid(os.getegid(), os.getegid())
            os.setreuid(sandbox, sandbox)
        if isinstance(cwd, str):
            os.chdir(cwd)
        # `random` reseeds itself after a fork; numpy's global generator does not.
        numpy_random = sys.modules.get("numpy.random")
        if numpy_random is not None:
            numpy_random.seed()
        kernel = Kernel(command_r, result_w)
        kernel.serve()
    except BaseException:  # noqa: BLE001
        try:
            os.write(2, traceback.format_exc().encode("utf-8", "replace"))
        finally:
            _die()
    _die()


def _make_undumpable() -> None:
    import ctypes

    try:
        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0
    except (OSError, AttributeError):
        pass


def main() -> NoReturn:
    if len(sys.argv) == 3 and sys.argv[1] == "--zygote":
        _zygote(int(sys.argv[2]))
    if len(sys.argv) != 3:
        sys.stderr.write("usage: kernel.py <command-fd> <result-fd>\n")
        os._exit(2)
    try:
        kernel = Kernel(int(sys.argv[1]), int(sys.argv[2]))
        kernel.serve()
    except BaseException:  # noqa: BLE001 - last resort: report and let the supervisor respawn
        try:
            os.write(2, traceback.format_exc().encode("utf-8", "replace"))
        finally:
            _die()


if __name__ == "__main__":
    main()
