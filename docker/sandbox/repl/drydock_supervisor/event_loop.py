"""The supervisor: one single-threaded selectors loop over the host channel, the
kernel's pipes and a pidfd for the kernel, with the timeouts computed from deadlines.
Its parts: host_channel.py (requests), execs.py (the exec in progress),
kernel_control.py (the kernel process)."""

from __future__ import annotations

import os
import selectors
import signal
import time

from .background import BackgroundMixin, BgProc
from .checkpoint import CheckpointMixin
from .terminals import Terminal, TerminalMixin
from .commands import EXIT_POLL_INTERVAL_S as COMMAND_POLL_INTERVAL_S, CommandMixin, CommandProc, Spawner
from .execs import Exec, ExecMixin
from .framing import MAX_HOST_FRAME, Exit, FrameReader, log
from .host_channel import HostChannelMixin
from .kernel_control import EVENT_PRIORITY, EXIT_POLL_INTERVAL_S, KERNEL_PATH, KERNEL_START_TIMEOUT_S, KernelMixin, KernelProc
from .privileges import Identity
from .processes import CPU_COUNTER_FILES, CounterFile
from .recycle import DEFAULT_SCRATCH_DIRS
from .session_tree import ChangeWatch, Snapshot
from .zygote import Zygote


class Supervisor(HostChannelMixin, CheckpointMixin, ExecMixin, CommandMixin, BackgroundMixin, TerminalMixin, KernelMixin):
    def __init__(
        self,
        host_in: int,
        host_out: int,
        session_dir: str,
        grace_s: float,
        oom_files: tuple[str, ...],
        identity: Identity | None = None,
        scratch_dirs: tuple[str, ...] = DEFAULT_SCRATCH_DIRS,
    ) -> None:
        self.host_in = host_in
        self.host_out = host_out
        self.session_dir = session_dir
        self.grace_s = grace_s
        # The cgroup's OOM and CPU counters (processes.py), kept open.
        self.oom_counter = CounterFile(oom_files)
        self.cpu_counter = CounterFile(CPU_COUNTER_FILES)
        # Who runs user code (privileges.py); without separation, the supervisor's user.
        self.identity = identity or Identity(None, None, os.getuid())
        # Where the sandbox user may write besides the session dir (emptied by recycle).
        self.scratch_dirs = scratch_dirs
        # Forks the kernels (zygote.py).
        zygote_env = dict(os.environ)
        zygote_env.setdefault("MPLBACKEND", "Agg")
        self.zygote = Zygote(KERNEL_PATH, session_dir, zygote_env)
        self.zygote_fd: int | None = None  # its channel, as registered with the selector
        self.selector = selectors.DefaultSelector()
        self.host_frames = FrameReader(MAX_HOST_FRAME)
        self.kernel: KernelProc | None = None
        self.generation = 0
        self.current: Exec | None = None
        # The process of the current exec when it is a command, and what starts
        # commands (commands.py); its channel as registered with the selector.
        self.command_proc: CommandProc | None = None
        self.spawner = Spawner(self.identity, zygote_env)
        self.spawner_fd: int | None = None
        # Background processes by id, running or exited (background.py).
        self.background: dict[str, BgProc] = {}
        # Open terminals by id (terminals.py).
        self.terminals: dict[str, Terminal] = {}
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
                for key, mask in events:
                    kind, generation = key.data[0], key.data[1]
                    if kind.startswith("bg-"):
                        self.dispatch_background_event(kind, key.data[2])
                        continue
                    if kind.startswith("pty-"):
                        self.dispatch_terminal_event(kind, key.data[2], mask)
                        continue
                    kernel = self.kernel
                    stale = kernel is None or kernel.generation != generation
                    if generation is not None and stale:
                        continue  # fd of a kernel replaced earlier in this batch
                    self.dispatch_event(kind, kernel)
                self.check_timers()
        except Exit as exc:
            return exc.code
        finally:
            self.stop_terminals()
            self.stop_background()
            self.stop_command()
            self.stop_kernel()
            self.zygote.stop()

    def dispatch_event(self, kind: str, kernel: KernelProc | None) -> None:
        if kind == "host":
            self.on_host_readable()
            return
        if kind == "zygote":
            self.on_zygote_readable()
            return
        if kind == "spawner":
            self.on_spawner_readable()
            return
        if kind.startswith("cmd-"):
            self.dispatch_command_event(kind)
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
        deadlines: list[float] = self.command_deadlines()
        if self.background_polling():
            deadlines.append(time.monotonic() + COMMAND_POLL_INTERVAL_S)
        kernel, cur = self.kernel, self.current
        if kernel is not None:
            if not kernel.ready:
                deadlines.append(kernel.started_at + KERNEL_START_TIMEOUT_S)
            if kernel.pidfd is None:
                deadlines.append(self.next_poll)
        if cur is not None and cur.started is not None and cur.command is None:
            if cur.interrupted_at is None:
                deadlines.append(cur.deadline)
            else:
                deadlines.append(cur.interrupted_at + self.grace_s)
        if not deadlines:
            return None
        return max(0.0, min(deadlines) - time.monotonic())

    def check_timers(self) -> None:
        now = time.monotonic()
        self.check_command_timers(now)
        if self.background_polling():
            self.check_background_exits()
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
        if cur is None or cur.started is None or cur.command is not None:
            return
        if cur.interrupted_at is None:
            if now >= cur.deadline:
                self.interrupt_exec(cancelled=False)
        elif now >= cur.interrupted_at + self.grace_s:
            self.kernel_lost(kernel, "interrupt" if cur.cancelled else "timeout")

    def interrupt_exec(self, cancelled: bool) -> None:
        """First ask nicely: the kernel turns SIGINT into KeyboardInterrupt and keeps its
        state. check_timers escalates if it has not answered after the grace."""
        cur, kernel = self.current, self.kernel
        if cur is None or kernel is None:
            return
        cur.interrupted_at = time.monotonic()
        cur.cancelled = cancelled
        try:
            os.kill(kernel.pid, signal.SIGINT)
        except ProcessLookupError:
            pass
