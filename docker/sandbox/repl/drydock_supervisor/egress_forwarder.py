"""Network egress for user code: a TCP listener on the container's loopback relayed to the
worker's proxy on a Unix socket.

A sandbox has no network (NetworkMode none: only `lo`). When the worker allows egress it
bind-mounts a Unix socket into the container (DRYDOCK_EGRESS_SOCKET, in a folder of the
supervisor's user with mode 0700, the socket itself 0600) and runs an HTTP forward proxy
on it (absolute-URI requests and CONNECT); it points user code at
HTTP_PROXY=http://127.0.0.1:3128. This module is what listens there: each TCP connection
is relayed byte for byte, both ways, to a new connection on the Unix socket. It parses
nothing: the proxy on the host side decides what may go where (and logs it), so there is
nothing here to bypass.

It runs as a process of its own, forked by the supervisor before any user code exists:
- the port is bound in the supervisor before the fork, so user code cannot take it
  first;
- the child's ids are all the supervisor's user (real, effective and saved): it may open
  the 0700 folder, which the sandbox user may not, and user code can neither signal it,
  trace it nor read its memory (it is not dumpable either);
- it holds nothing of the supervisor's: every inherited fd is closed but the listener
  and stderr (the host channel above all);
- it dies with the supervisor (PR_SET_PDEATHSIG, or a thread watching getppid()).

Threads: the accept loop, and two per relayed connection (one per direction), at most
MAX_RELAYS connections at once (past that a new one is closed at once). Each direction
reads into a reusable buffer (grown for bulk transfers) and writes it out; EOF on one side
becomes shutdown(SHUT_WR) on the other (half-closes are passed on), any error ends both.

The supervisor never waits for "any child" (its waits name a pid, or use a pidfd), so
the forwarder's exit status is never taken for another process's. Should the forwarder
die, it stays a zombie of the supervisor (no memory, no fds; /proc scans skip zombies)
until the supervisor exits; the session just has no network from then on.
"""

from __future__ import annotations

import os
import signal
import socket
import struct
import threading
import time

from .framing import log
from .privileges import Identity
from .processes import make_undumpable

DEFAULT_LISTEN = "127.0.0.1:3128"
LISTEN_BACKLOG = 512
# Concurrent relayed connections; past that, a new connection is closed at once.
MAX_RELAYS = 256
# Each direction starts with a small buffer and takes a large one once a read fills it
# (a bulk transfer): idle tunnels cost little, downloads get few system calls. (Larger
# buffers, or os.splice through a pipe, measured no faster: about loopback speed already.)
SMALL_BUFFER = 16 * 1024
LARGE_BUFFER = 128 * 1024
CONNECT_TIMEOUT_S = 10.0
THREAD_STACK = 512 * 1024
PARENT_POLL_S = 0.5
PROCESS_NAME = b"drydock-egress"
# The same complaint (the proxy is unreachable, accept fails) at most once per this.
LOG_EVERY_S = 10.0

PR_SET_PDEATHSIG = 1
PR_SET_NAME = 15
_TIMEVAL = struct.Struct("@ll")  # struct timeval


def parse_listen(listen: str) -> tuple[str, int]:
    """ "host:port" (IPv6 as "[::1]:port") -> (host, port); ValueError when malformed."""
    host, sep, port = listen.strip().rpartition(":")
    if not sep or not host:
        raise ValueError(f"expected host:port, got {listen!r}")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    number = int(port)
    if not 0 < number < 65536:
        raise ValueError(f"port out of range in {listen!r}")
    return host, number


def start_forwarder(socket_path: str, listen: str, identity: Identity) -> int | None:
    """Binds `listen` here, forks the forwarder and returns its pid; None when it could
    not be started (logged: the session then has no network). Never raises."""
    try:
        host, port = parse_listen(listen)
        listener = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    except (OSError, ValueError) as exc:
        log(f"egress forwarder: cannot listen on {listen!r}: {exc}")
        return None
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((host, port))
        listener.listen(LISTEN_BACKLOG)
    except OSError as exc:
        log(f"egress forwarder: cannot listen on {listen}: {exc}")
        listener.close()
        return None
    parent = os.getpid()
    try:
        pid = os.fork()
    except OSError as exc:
        log(f"egress forwarder: cannot fork: {exc}")
        listener.close()
        return None
    if pid == 0:  # pragma: no cover - runs in the child, which never returns
        try:
            _child(listener, socket_path, identity, parent)
        except BaseException as exc:  # noqa: BLE001 - the child must never unwind into the supervisor's code
            log(f"egress forwarder: stopped: {type(exc).__name__}: {exc}")
        os._exit(1)
    listener.close()
    return pid


# ---------------------------------------------------------------------------- the child


def _child(listener: socket.socket, socket_path: str, identity: Identity, parent: int) -> None:
    # Ctrl-C meant for the supervisor is not for us; SIGTERM (from the supervisor) ends us.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _close_inherited_fds(listener.fileno())
    if identity.separated:
        # All three ids the supervisor's user: the sandbox user's effective id goes.
        gid = os.getresgid()[0]
        os.setresgid(gid, gid, gid)
        os.setresuid(identity.supervisor_uid, identity.supervisor_uid, identity.supervisor_uid)
        if os.getresuid() != (identity.supervisor_uid,) * 3 or os.getresgid() != (gid,) * 3:
            raise RuntimeError("the forwarder's ids are not what was set")
    # After the ids: changing them resets the dumpable flag and the parent-death signal.
    make_undumpable()
    _set_name()
    _die_with(parent)
    threading.stack_size(THREAD_STACK)
    Forwarder(listener, socket_path).serve_forever()


def _close_inherited_fds(keep: int) -> None:
    """Every fd but `keep` and stderr; 0 and 1 become /dev/null."""
    try:
        fds = [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        fds = []
        os.closerange(3, keep)
        os.closerange(keep + 1, max(keep + 1, os.sysconf("SC_OPEN_MAX")))
    for fd in fds:
        if fd not in (keep, 2):
            try:
                os.close(fd)
            except OSError:
                pass  # the listing's own fd, already closed
    devnull = os.open(os.devnull, os.O_RDWR)  # fd 0 or 1: the lowest free
    for fd in (0, 1):
        if fd != devnull:
            os.dup2(devnull, fd)
    if devnull not in (0, 1):
        os.close(devnull)


def _prctl(option: int, arg: int | bytes) -> bool:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(option, arg, 0, 0, 0) == 0)
    except (ImportError, OSError, AttributeError):
        return False


def _set_name() -> None:
    _prctl(PR_SET_NAME, PROCESS_NAME)  # what ps and /proc/<pid>/stat show


def _set_pdeathsig(signum: int) -> bool:
    return _prctl(PR_SET_PDEATHSIG, int(signum))


def _die_with(parent: int) -> None:
    """SIGKILL when the supervisor exits, or a thread that notices it has."""
    if _set_pdeathsig(signal.SIGKILL):
        if os.getppid() != parent:  # it died before the signal was asked for
            os._exit(0)
        return
    log("egress forwarder: no PR_SET_PDEATHSIG; watching the supervisor instead")

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL_S)
        os._exit(0)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


class _Throttled:
    """Logs one line per kind at most every LOG_EVERY_S, with how many were held back."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last: dict[str, float] = {}
        self._held: dict[str, int] = {}

    def __call__(self, kind: str, message: str) -> None:
        now = time.monotonic()
        with self._lock:
            if now - self._last.get(kind, -LOG_EVERY_S) < LOG_EVERY_S:
                self._held[kind] = self._held.get(kind, 0) + 1
                return
            self._last[kind] = now
            held = self._held.pop(kind, 0)
        log(f"egress forwarder: {message}" + (f" ({held} more like it not logged)" if held else ""))


class Forwarder:
    def __init__(self, listener: socket.socket, socket_path: str, max_relays: int = MAX_RELAYS) -> None:
        self.listener = listener
        self.socket_path = socket_path
        self.max_relays = max_relays
        self.slots = threading.BoundedSemaphore(max_relays)
        self.log = _Throttled()

    def serve_forever(self) -> None:
        while True:
            try:
                self._accept_one()
            except Exception as exc:  # noqa: BLE001 - nothing may end the loop
                self.log("loop", f"{type(exc).__name__}: {exc}")
                time.sleep(0.05)

    def _accept_one(self) -> None:
        try:
            conn, _ = self.listener.accept()
        except OSError as exc:  # EMFILE, ENOBUFS, ...: wait a little rather than spin
            self.log("accept", f"accept failed: {exc}")
            time.sleep(0.05)
            return
        if not self.slots.acquire(blocking=False):
            self.log("full", f"{self.max_relays} connections already relayed; one refused")
            conn.close()
            return
        try:
            threading.Thread(target=self._relay, args=(conn,), daemon=True).start()
        except BaseException:
            conn.close()
            self.slots.release()
            raise

    def _relay(self, conn: socket.socket) -> None:
        upstream: socket.socket | None = None
        try:
            upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                # A blocking connect that waits while the proxy's backlog is full, up to
                # the send timeout (a timeout of Python's would make the socket
                # non-blocking: EAGAIN at once); the timeout is then lifted again.
                upstream.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, _TIMEVAL.pack(int(CONNECT_TIMEOUT_S), 0))
                upstream.connect(self.socket_path)
                upstream.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, _TIMEVAL.pack(0, 0))
            except OSError as exc:
                self.log("connect", f"cannot reach the proxy at {self.socket_path}: {exc}")
                return
            try:
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except OSError:
                pass
            back = threading.Thread(target=_pump, args=(upstream, conn), daemon=True)
            back.start()
            _pump(conn, upstream)
            back.join()
        except Exception as exc:  # noqa: BLE001 - e.g. no thread could be started
            self.log("relay", f"relay failed: {type(exc).__name__}: {exc}")
        finally:
            conn.close()
            if upstream is not None:
                upstream.close()
            self.slots.release()


def _pump(src: socket.socket, dst: socket.socket) -> None:
    """Copies src to dst until src's EOF, then half-closes dst; on any error, ends both
    connections (the other direction's thread then stops too)."""
    try:
        buf = bytearray(SMALL_BUFFER)
        view = memoryview(buf)
        while True:
            n = src.recv_into(buf)
            if not n:
                break
            dst.sendall(view[:n])
            if n == len(buf) and len(buf) < LARGE_BUFFER:
                view.release()
                buf = bytearray(LARGE_BUFFER)
                view = memoryview(buf)
        dst.shutdown(socket.SHUT_WR)
    except Exception:  # noqa: BLE001 - OSError mostly; never leave the other direction hanging
        for sock in (src, dst):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
