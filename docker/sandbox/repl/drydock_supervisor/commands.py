"""Commands: an exec whose work is a process, not a cell (`exec` with `command`).

The supervisor starts the process itself, as the plain sandbox user, in a session and
process group of its own, beside the kernel (which it never touches: the REPL's
variables survive whatever the command does, short of it killing the kernel, which
the sandbox user can do to its own processes). Its stdout and stderr are captured like
a cell's (the same caps, the same `stream` events), its stdin is written from the
request and closed, and its exit is seen on a pidfd. The `done` frame is an exec's,
with the files the command changed under the session dir and the artifacts listing,
plus `exitCode` and `signal`.

When the process exits, everything left in its session (children, a pipeline's other
members) is killed, so nothing it started writes into a later run; a timeout kills
the same set. A process that left the session (a double-forking daemon calling
setsid) is out of reach of the group, bounded by the container's pids limit, and its
writes to the command's pipes fail once the supervisor has closed them.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .framing import READ_CHUNK, log
from .interpreters import platform_python
from .processes import iter_processes, read_oom_kills

if TYPE_CHECKING:
    from .execs import Exec

# Reads of one pipe after the process exited: bounded, as for a cell's drain, so that
# something still writing (a process that left the session) cannot hold up `done`.
DRAIN_MAX_READS = 64
# Only where pidfd_open is unavailable: how often the exit is polled.
EXIT_POLL_INTERVAL_S = 0.02
KILL_ROUNDS = 10
SANDBOX_USER = "sandbox"
DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"


@dataclass
class CommandProc:
    pid: int
    # Forked by the supervisor (the spawner was unavailable); else the spawner's child,
    # whose exit status the spawner reports.
    popen: subprocess.Popen[bytes] | None
    stdout_fd: int
    stderr_fd: int
    stdin_fd: int  # -1 once written and closed (or when there is no stdin)
    stdin_left: memoryview
    pidfd: int | None
    # Why the supervisor ended it: "timeout", "interrupt" (SIGKILL after the grace of an
    # interrupt), or None while it runs on its own terms.
    killed_by: str | None = None
    next_poll: float = 0.0


def check_command(value: Any) -> str | None:
    """Why the request's `command` cannot be run, or None."""
    if not isinstance(value, dict):
        return "command must be an object"
    argv = value.get("argv")
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) and "\0" not in a for a in argv):
        return "command.argv must be a non-empty list of strings without NUL"
    cwd = value.get("cwd", "/session")
    if not isinstance(cwd, str) or not cwd.startswith("/") or "\0" in cwd:
        return "command.cwd must be an absolute path"
    env = value.get("env", {})
    if not isinstance(env, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and k and "=" not in k and "\0" not in k + v for k, v in env.items()
    ):
        return "command.env must map names to strings"
    stdin = value.get("stdin")
    if stdin is not None and not isinstance(stdin, str):
        return "command.stdin must be a string"
    return None


def command_env(session_dir: str, cwd: str, extra: dict[str, str]) -> dict[str, str]:
    """The sandbox's environment for a command: the container's, with the sandbox
    user's identity and home, then the caller's variables (the platform's own names
    are refused by the gateway before they get here, and set last anyway)."""
    env = dict(os.environ)
    env.setdefault("PATH", DEFAULT_PATH)
    env.update(extra)
    env.update({"HOME": session_dir, "USER": SANDBOX_USER, "LOGNAME": SANDBOX_USER, "PWD": cwd})
    return env


def session_members(sid: int) -> list[int]:
    """Live processes whose session or process group is `sid`."""
    return [pid for pid, _ppid, pgrp, session in iter_processes() if sid in (pgrp, session)]


def kill_session(sid: int) -> int:
    """SIGKILL every process of the command's session (its group is stopped first, so a
    fork bomb in it cannot outrun the /proc scan). How many were killed."""
    try:
        os.killpg(sid, signal.SIGSTOP)
    except (ProcessLookupError, PermissionError):
        pass
    killed = 0
    try:
        for _ in range(KILL_ROUNDS):
            members = session_members(sid)
            if not members:
                break
            for pid in members:
                try:
                    os.kill(pid, signal.SIGKILL)
                    killed += 1
                except (ProcessLookupError, PermissionError):
                    continue
    finally:
        try:
            os.killpg(sid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    return killed


def pid_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"SIG{number}"


SPAWNER_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "spawner.py")
SPAWNER_START_TIMEOUT_S = 10.0
SPAWN_TIMEOUT_S = 2.0
PACKET = 1 << 20
# A spawner that died is started again at most this often (user code can kill it).
SPAWNER_RESTART_INTERVAL_S = 1.0


class Spawner:
    """The supervisor's end of spawner.py: starts it as the sandbox user, asks it for
    processes, collects their exit statuses. Unavailable (never started, killed or
    stopped by user code): spawn() answers None and the caller forks the command itself."""

    def __init__(self, identity: Any, env: dict[str, str]) -> None:
        self.identity = identity
        self.env = env
        self.sock: socket.socket | None = None
        self.proc: subprocess.Popen[bytes] | None = None
        self.exits: dict[int, int] = {}
        self.next_start = 0.0

    @property
    def fd(self) -> int | None:
        return self.sock.fileno() if self.sock is not None else None

    def ensure(self) -> bool:
        if self.sock is not None:
            return True
        now = time.monotonic()
        if now < self.next_start:
            return False
        self.next_start = now + SPAWNER_RESTART_INTERVAL_S
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self.proc = subprocess.Popen(
                [*platform_python(), "-I", "-S", SPAWNER_PATH, str(theirs.fileno())],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=None,
                pass_fds=(theirs.fileno(),),
                cwd="/",
                env=self.env,
                start_new_session=True,
                user=self.identity.sandbox_uid,
                group=self.identity.sandbox_gid,
            )
        except OSError as exc:
            log(f"cannot start the spawner: {exc}")
            ours.close()
            theirs.close()
            return False
        theirs.close()
        ours.settimeout(SPAWNER_START_TIMEOUT_S)
        try:
            ready = ours.recv(PACKET) == b'{"ev": "ready"}'
        except OSError:
            ready = False
        if not ready:
            log("the spawner did not start; commands are forked by the supervisor")
            ours.close()
            self.stop()
            return False
        self.sock = ours
        return True

    def spawn(self, argv: list[str], cwd: str, env: dict[str, str], fds: tuple[int, ...], op: str = "spawn") -> int | OSError | None:
        """The new process's pid, the OSError that kept it from starting, or None when
        the spawner could not be asked. `op` "spawn-pty" starts a terminal's shell on the
        one pty slave in `fds`."""
        if not self.ensure():
            return None
        assert self.sock is not None
        try:
            self.sock.settimeout(SPAWN_TIMEOUT_S)
            socket.send_fds(self.sock, [json.dumps({"op": op, "argv": argv, "cwd": cwd, "env": env}).encode()], list(fds))
            while True:
                message = self.receive()
                if message is None:
                    return None
                if message.get("ev") == "spawned":
                    return int(message["pid"])
                if message.get("ev") == "failed":
                    code = int(message.get("errno") or 0)
                    return OSError(code, str(message.get("strerror") or os.strerror(code)), str(message.get("filename") or ""))
        except (OSError, ValueError, KeyError):
            log("the spawner did not answer; it is replaced")
            self.lost()
            return None

    def on_readable(self) -> None:
        """Collects exit statuses (called by the event loop)."""
        while self.sock is not None:
            try:
                self.sock.setblocking(False)
                if self.receive() is None:
                    return
            except BlockingIOError:
                return
            except (OSError, ValueError):
                self.lost()
                return

    def wait(self, pid: int, timeout: float) -> int | None:
        """The exit status of `pid` (as Popen.returncode), waiting up to `timeout` for the
        spawner to report it; None if it cannot (the spawner is gone)."""
        deadline = time.monotonic() + timeout
        while pid not in self.exits and self.sock is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            try:
                self.sock.settimeout(left)
                self.receive()
            except (TimeoutError, BlockingIOError):
                break
            except (OSError, ValueError):
                self.lost()
        return self.exits.pop(pid, None)

    def receive(self) -> dict[str, Any] | None:
        assert self.sock is not None
        data = self.sock.recv(PACKET)
        if not data:
            self.lost()
            return None
        message = json.loads(data)
        if not isinstance(message, dict):
            return {}
        if message.get("ev") == "exit":
            self.exits[int(message["pid"])] = int(message["code"])
            if len(self.exits) > 1000:  # statuses nobody waited for (processes of gone commands)
                self.exits.pop(next(iter(self.exits)))
        return message

    def lost(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        self.stop()

    def stop(self) -> None:
        if self.proc is not None:
            if self.proc.poll() is None:
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            try:
                self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass
        self.proc = None


class CommandMixin:
    """Part of Supervisor (event_loop.py): the command in progress (self.current with
    `command` set, and self.command_proc)."""

    def spawn_process(self, spec: dict[str, Any], stdin_pipe: bool) -> CommandProc | OSError:
        """Starts `spec` (argv, cwd, env) as the sandbox user in a session of its own, with
        pipes for stdout and stderr, and for stdin when `stdin_pipe` (else /dev/null):
        through the spawner's vfork when it answers, else a fork of our own. The fds kept
        are non-blocking; nothing is registered with the selector yet."""
        cwd = spec.get("cwd", self.session_dir)
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        in_r, in_w = os.pipe() if stdin_pipe else (os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC), -1)
        env = command_env(self.session_dir, cwd, spec.get("env", {}))
        spawned = self.spawner.spawn(spec["argv"], cwd, env, (in_r, out_w, err_w))
        self.watch_spawner()
        popen: subprocess.Popen[bytes] | None = None
        try:
            if isinstance(spawned, OSError):
                raise spawned
            if spawned is None:
                popen = subprocess.Popen(
                    spec["argv"],
                    stdin=in_r,
                    stdout=out_w,
                    stderr=err_w,
                    cwd=cwd,
                    env=env,
                    start_new_session=True,
                    # The plain sandbox user (privileges.py), as the kernel.
                    user=self.identity.sandbox_uid,
                    group=self.identity.sandbox_gid,
                    close_fds=True,
                )
                spawned = popen.pid
        except OSError as exc:
            for fd in (out_r, out_w, err_r, err_w, in_r, in_w):
                if fd >= 0:
                    os.close(fd)
            return exc
        for fd in (out_w, err_w, in_r):
            if fd >= 0:
                os.close(fd)
        for fd in (out_r, err_r, in_w):
            if fd >= 0:
                os.set_blocking(fd, False)
        pidfd: int | None = None
        if popen is not None:
            try:
                pidfd = os.pidfd_open(spawned)
            except (AttributeError, OSError):
                pidfd = None  # polled
        # else: its exit comes from the spawner (on_spawner_readable).
        return CommandProc(
            pid=spawned,
            popen=popen,
            stdout_fd=out_r,
            stderr_fd=err_r,
            stdin_fd=in_w,
            stdin_left=memoryview(b""),
            pidfd=pidfd,
            next_poll=time.monotonic() + EXIT_POLL_INTERVAL_S,
        )

    def start_command(self) -> None:
        cur = self.current
        assert cur is not None and cur.command is not None
        spec = cur.command
        self.begin_tracking(cur)
        stdin = spec.get("stdin")
        proc = self.spawn_process(spec, stdin is not None)
        if isinstance(proc, OSError):
            self.finish_unstarted_command(spec.get("cwd", self.session_dir), proc)
            return
        proc.stdin_left = memoryview(stdin.encode("utf-8") if stdin is not None else b"")
        self.command_proc = proc
        self.selector.register(proc.stdout_fd, selectors.EVENT_READ, ("cmd-stdout", None))
        self.selector.register(proc.stderr_fd, selectors.EVENT_READ, ("cmd-stderr", None))
        if proc.stdin_fd >= 0:
            self.selector.register(proc.stdin_fd, selectors.EVENT_WRITE, ("cmd-stdin", None))
        if proc.pidfd is not None:
            self.selector.register(proc.pidfd, selectors.EVENT_READ, ("cmd-pidfd", None))
        if proc.popen is None and proc.pid in self.spawner.exits:
            self.command_exited(proc)  # over already: the spawner said so while it answered

    def finish_unstarted_command(self, cwd: str, exc: OSError) -> None:
        """The process could not be started: a shell's codes (127 not found, 126 not
        runnable) with a line on stderr saying why."""
        cur = self.current
        assert cur is not None and cur.command is not None
        program = cur.command["argv"][0]
        if exc.filename == cwd and program != cwd:
            line = f"drydock: cannot start in {cwd}: {exc.strerror}\n"
            code = 1
        else:
            line = f"drydock: {program}: {exc.strerror}\n"
            code = 127 if isinstance(exc, FileNotFoundError) else 126
        cur.stderr.add(line.encode("utf-8", "replace"))
        self.finish_exec("error", exit_code=code, signal_name=None)

    def dispatch_command_event(self, kind: str) -> None:
        proc = self.command_proc
        if proc is None:
            return
        if kind == "cmd-stdout":
            self.read_command_pipe(proc, "stdout")
        elif kind == "cmd-stderr":
            self.read_command_pipe(proc, "stderr")
        elif kind == "cmd-stdin":
            self.write_command_stdin(proc)
        elif kind == "cmd-pidfd":
            self.command_exited(proc)

    def read_command_pipe(self, proc: CommandProc, name: str) -> None:
        fd = proc.stdout_fd if name == "stdout" else proc.stderr_fd
        if fd < 0:
            return
        try:
            data = os.read(fd, READ_CHUNK)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data:
            self.on_command_output(name, data)
            return
        # Every writer closed it (the process may go on without its output).
        self.close_command_fd(proc, name)

    def on_command_output(self, name: str, data: bytes) -> None:
        cur = self.current
        assert cur is not None
        text = (cur.stdout if name == "stdout" else cur.stderr).add(data)
        if text:
            self.send({"ev": "stream", "id": cur.id, "name": name, "text": text})

    def write_command_stdin(self, proc: CommandProc) -> None:
        if proc.stdin_fd < 0:
            return
        try:
            while proc.stdin_left:
                proc.stdin_left = proc.stdin_left[os.write(proc.stdin_fd, proc.stdin_left) :]
        except BlockingIOError:
            return
        except OSError:
            pass  # the process closed its stdin or exited: the rest is not wanted
        self.close_command_fd(proc, "stdin")

    def close_command_fd(self, proc: CommandProc, name: str) -> None:
        fd = {"stdout": proc.stdout_fd, "stderr": proc.stderr_fd, "stdin": proc.stdin_fd}[name]
        if fd < 0:
            return
        try:
            self.selector.unregister(fd)
        except (KeyError, ValueError):
            pass
        os.close(fd)
        if name == "stdout":
            proc.stdout_fd = -1
        elif name == "stderr":
            proc.stderr_fd = -1
        else:
            proc.stdin_fd = -1

    def wait_exit(self, pid: int, popen: subprocess.Popen[bytes] | None) -> int | None:
        """The exit status (as Popen.returncode) of a process that has ended: from the
        spawner that started it, or from our own child; None when it cannot be known."""
        if popen is None:
            return self.spawner.wait(pid, 5.0)
        try:
            return popen.wait(timeout=5.0)
        except subprocess.TimeoutExpired:
            log(f"process {pid} did not die after SIGKILL")
            return None

    def release_pidfd(self, pidfd: int | None) -> None:
        if pidfd is None:
            return
        try:
            self.selector.unregister(pidfd)
        except (KeyError, ValueError):
            pass
        os.close(pidfd)

    def command_exited(self, proc: CommandProc) -> None:
        """Its main process is gone: end what it left, collect the output, answer."""
        kill_session(proc.pid)
        rc = self.wait_exit(proc.pid, proc.popen)
        for name in ("stdout", "stderr"):
            fd = proc.stdout_fd if name == "stdout" else proc.stderr_fd
            for _ in range(DRAIN_MAX_READS):
                if fd < 0:
                    break
                try:
                    data = os.read(fd, READ_CHUNK)
                except OSError:
                    break
                if not data:
                    break
                self.on_command_output(name, data)
            self.close_command_fd(proc, name)
        self.close_command_fd(proc, "stdin")
        self.release_pidfd(proc.pidfd)
        proc.pidfd = None
        self.command_proc = None
        self.finish_command(proc, rc)

    def finish_command(self, proc: CommandProc, rc: int | None) -> None:
        cur = self.current
        assert cur is not None
        exit_code = rc if rc is not None and rc >= 0 else None
        sig = signal_name(-rc) if rc is not None and rc < 0 else None
        if rc is None and proc.killed_by is None:
            error = {"name": "ExitStatusLost", "value": "the command ended, but its exit status was lost with the process that started it", "traceback": ""}
            self.finish_exec("error", error=error, exit_code=None, signal_name=None)
            return
        if proc.killed_by == "timeout":
            error = {"name": "TimeoutError", "value": f"the command exceeded the time limit of {cur.timeout_ms:g} ms and was killed with its process group", "traceback": ""}
            self.finish_exec("timeout", error=error, exit_code=None, signal_name="SIGKILL")
            return
        if rc == -signal.SIGKILL and proc.killed_by is None:
            after = read_oom_kills(self.oom_counter)
            if cur.oom_before is not None and after is not None and after > cur.oom_before:
                error = {"name": "OutOfMemory", "value": "the sandbox ran out of memory and the command was killed", "traceback": ""}
                self.finish_exec("memory", error=error, exit_code=None, signal_name="SIGKILL")
                return
        self.finish_exec("ok" if exit_code == 0 else "error", exit_code=exit_code, signal_name=sig)

    def check_command_timers(self, now: float) -> None:
        cur, proc = self.current, self.command_proc
        if cur is None or proc is None:
            return
        if proc.pidfd is None and (proc.popen is not None or self.spawner.fd is None) and now >= proc.next_poll:
            proc.next_poll = now + EXIT_POLL_INTERVAL_S
            if proc.popen is not None:
                gone = proc.popen.poll() is not None
            else:
                self.spawner.on_readable()
                gone = proc.pid in self.spawner.exits or not pid_exists(proc.pid)
            if gone:
                self.command_exited(proc)
                return
        if proc.killed_by is not None:
            return
        if cur.interrupted_at is None and now >= cur.deadline:
            proc.killed_by = "timeout"
            kill_session(proc.pid)
        elif cur.interrupted_at is not None and now >= cur.interrupted_at + self.grace_s:
            proc.killed_by = "interrupt"
            kill_session(proc.pid)

    def command_deadlines(self) -> list[float]:
        cur, proc = self.current, self.command_proc
        if cur is None or proc is None:
            return []
        deadlines: list[float] = []
        if proc.killed_by is None:
            deadlines.append(cur.deadline if cur.interrupted_at is None else cur.interrupted_at + self.grace_s)
        if proc.pidfd is None and (proc.popen is not None or self.spawner.fd is None):
            deadlines.append(proc.next_poll)
        return deadlines

    def interrupt_command(self) -> None:
        """The host's interrupt: SIGINT to the command's group, as a terminal's ^C; after
        the grace, check_command_timers kills the group."""
        cur, proc = self.current, self.command_proc
        if cur is None or proc is None:
            return
        cur.interrupted_at = time.monotonic()
        cur.cancelled = True
        try:
            os.killpg(proc.pid, signal.SIGINT)
        except (ProcessLookupError, PermissionError):
            pass

    def stop_command(self) -> None:
        """The supervisor is exiting: the command goes with it, and the spawner."""
        proc, self.command_proc = self.command_proc, None
        if proc is not None:
            kill_session(proc.pid)
        self.spawner.stop()

    def on_spawner_readable(self) -> None:
        self.spawner.on_readable()
        if self.spawner.fd is None:
            self.forget_spawner()
        proc = self.command_proc
        if proc is not None and proc.popen is None and proc.pid in self.spawner.exits:
            self.command_exited(proc)
        for bg in list(self.background.values()):
            if bg.exit is None and bg.proc.popen is None and bg.proc.pid in self.spawner.exits:
                self.bg_exited(bg)
        self.check_terminal_exits()

    def forget_spawner(self) -> None:
        if self.spawner_fd is not None:
            try:
                self.selector.unregister(self.spawner_fd)
            except (KeyError, ValueError):
                pass
            self.spawner_fd = None

    def watch_spawner(self) -> None:
        """Registers the spawner's channel (a new one after a restart) with the loop."""
        fd = self.spawner.fd
        if fd == self.spawner_fd:
            return
        self.forget_spawner()
        if fd is not None:
            self.selector.register(fd, selectors.EVENT_READ, ("spawner", None))
            self.spawner_fd = fd
