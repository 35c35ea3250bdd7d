"""The kernel: the child process that runs user code (kernel.py), spawned, fed cells
over its command pipe, read back over its result and output pipes, timed out, killed
with everything it started, and respawned when it dies."""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from .execs import Exec, interrupted_error, timeout_error
from .framing import MAX_KERNEL_FRAME, PROTOCOL_VERSION, READ_CHUNK, Exit, FrameReader, encode_frame, log
from .interpreters import user_python
from .processes import iter_processes, read_oom_kills
from .zygote import ForkedKernel

KERNEL_START_TIMEOUT_S = 30.0
KERNEL_START_ATTEMPTS = 3
# Bound on the reads of one post-result drain: a background child that writes
# non-stop must not be able to hold up the `done` frame forever.
DRAIN_MAX_READS = 64
# Only used where pidfd_open is unavailable (old kernels, strict seccomp).
EXIT_POLL_INTERVAL_S = 0.1
# Order of handling within one select() batch: host first (pings stay prompt), kernel
# output before results, the pidfd last so a result written just before an exit counts.
# A command's pipes (commands.py) are read before its pidfd, for the same reason.
EVENT_PRIORITY = {
    "host": 0, "stdout": 1, "stderr": 1, "result": 2, "command": 3, "zygote": 4, "pidfd": 5,
    "cmd-stdout": 1, "cmd-stderr": 1, "cmd-stdin": 1, "cmd-pidfd": 5, "spawner": 4,
    "bg-stdout": 1, "bg-stderr": 1, "bg-stdin": 1, "bg-pidfd": 5, "pty-master": 1, "pty-pidfd": 5,
}
KERNEL_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "kernel.py")


@dataclass
class KernelProc:
    # Forked by the zygote (zygote.py), or a process of its own when there is none.
    proc: subprocess.Popen[bytes] | ForkedKernel
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


class KernelMixin:
    """Part of Supervisor (event_loop.py): the kernel process."""

    def spawn_kernel(self) -> None:
        self.generation += 1
        command_r, command_w = os.pipe()
        result_r, result_w = os.pipe()
        stdout_r, stdout_w = os.pipe()
        stderr_r, stderr_w = os.pipe()
        proc: subprocess.Popen[bytes] | ForkedKernel | None = None
        pid = self.zygote_fork((command_r, result_w, stdout_w, stderr_w))
        if pid is not None:
            proc = ForkedKernel(pid, self.zygote)
        env = dict(os.environ)
        env.setdefault("MPLBACKEND", "Agg")  # no display in a sandbox
        try:
            if proc is None:
                proc = subprocess.Popen(
                    [user_python(env), KERNEL_PATH, str(command_r), str(result_w)],
                    stdin=subprocess.DEVNULL,
                    stdout=stdout_w,
                    stderr=stderr_w,
                    pass_fds=(command_r, result_w),
                    cwd=self.session_dir,
                    env=env,
                    # Own session and process group: killpg reaches everything user code
                    # spawned, and terminal/job-control signals never reach it.
                    start_new_session=True,
                    # The plain sandbox user (privileges.py); no supplementary groups to set.
                    user=self.identity.sandbox_uid,
                    group=self.identity.sandbox_gid,
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

    def zygote_fork(self, fds: tuple[int, int, int, int]) -> int | None:
        """A kernel forked by the zygote (started, or started again, when needed); None
        when there is no zygote to ask."""
        zygote = self.zygote
        if zygote.sock is None:
            self.forget_zygote()
            if not zygote.start():
                return None
            assert zygote.fd is not None
            self.zygote_fd = zygote.fd
            self.selector.register(zygote.fd, selectors.EVENT_READ, ("zygote", None))
        pid = zygote.fork(fds, self.session_dir)
        if zygote.sock is None:
            self.forget_zygote()
        return pid

    def forget_zygote(self) -> None:
        """Drops the selector's registration of a zygote channel that is gone."""
        fd, self.zygote_fd = self.zygote_fd, None
        if fd is not None:
            try:
                self.selector.unregister(fd)
            except (KeyError, ValueError, OSError):
                pass

    def on_zygote_readable(self) -> None:
        self.zygote.on_readable()
        if self.zygote.sock is None:
            self.forget_zygote()

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

    def ready_frame(self) -> dict[str, Any]:
        """What the supervisor says of itself once it can take requests."""
        features = (["recycle"] if self.identity.separated else []) + ["fs-read", "fs-write", "fs-list", "interrupt", "commands", "background", "terminals"]
        if os.environ.get("DRYDOCK_CHANNEL_SOCKET"):
            features.append("checkpoint")  # checkpoint.py
        return {
            "ev": "ready",
            "protocol": PROTOCOL_VERSION,
            "python": "%d.%d.%d" % sys.version_info[:3],
            "pid": os.getpid(),
            # Optional requests this supervisor can serve.
            "features": features,
        }

    def on_kernel_message(self, kernel: KernelProc, message: dict[str, Any]) -> None:
        ev = message.get("ev")
        cur = self.current
        if ev == "ready" and not kernel.ready:
            kernel.ready = True
            self.start_failures = 0
            if not self.announced:
                self.announced = True
                self.send(self.ready_frame())
            if cur is not None and cur.started is None and cur.command is None:
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
                for pid, ppid, pgrp, _sid in iter_processes():
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
        "interrupt" (the same after the host's `interrupt`), "startup" (never became
        ready).
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
        if cur is not None and cur.command is not None:
            cur = None  # a command runs without the kernel: it goes on
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
        if reason == "interrupt":
            value = f"the execution was interrupted and the Python process did not stop within {self.grace_s:g} s, so it was restarted"
            return "killed", None, interrupted_error(value)
        if rc == -signal.SIGKILL:
            # SIGKILL we did not send: the memory cgroup's OOM killer if its counter moved.
            after = read_oom_kills(self.oom_counter)
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

