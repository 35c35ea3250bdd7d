#!/usr/bin/env python3
"""Drydock REPL supervisor: the long-lived main process of a sandbox container.

It owns the host channel (length-prefixed JSON frames on the container's stdin/stdout,
see README.md) and never runs user code itself. User code runs in kernel.py, a child
process in its own session/process group whose stdout/stderr are pipes read here, so
nothing the user does can write a frame to the host. The supervisor enforces the
per-exec wall-clock timeout (SIGINT, then SIGKILL of the whole process group), the
per-stream output cap, and respawns the kernel when it dies (OOM kill, os._exit, ...).

Single-threaded: one `selectors` loop over the host channel, the kernel's pipes and a
pidfd for the kernel, with the timeouts computed from deadlines. This file is the entry
point; the supervisor itself is the drydock_supervisor package (see README.md).

Standard library only.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any, NoReturn

# Started with -I (the platform's runtime, drydock_supervisor/interpreters.py), so the
# script's own folder is not on sys.path unless said.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from drydock_supervisor.egress_forwarder import DEFAULT_LISTEN, start_forwarder
from drydock_supervisor.event_loop import Supervisor
from drydock_supervisor.framing import Exit, log
from drydock_supervisor.privileges import separate
from drydock_supervisor.processes import OOM_COUNTER_FILES, make_undumpable
from drydock_supervisor.recycle import DEFAULT_SCRATCH_DIRS
from drydock_supervisor.socket_channel import accept_host_channel


def on_terminate(signum: int, frame: Any) -> NoReturn:
    raise Exit(0)


def main() -> int:
    # The host channel is the original stdout. Keep it on a private fd and point fd 1
    # (and print/sys.stdout) at stderr, so a stray print here lands in the container
    # log instead of corrupting the frame stream. Likewise fd 0 becomes /dev/null.
    host_out = os.dup(1)
    host_in = os.dup(0)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    os.close(devnull)
    sys.stdout = sys.stderr
    # Started as root (the container): from here on, the supervisor's own user with the
    # sandbox user's effective id and no capability (privileges.py).
    identity = separate()
    # The host channel on a Unix socket instead (socket_channel.py): stdin and stdout
    # are then left unused. Before make_undumpable: making the socket changes ids.
    channel_socket = os.environ.get("DRYDOCK_CHANNEL_SOCKET")
    if channel_socket:
        os.close(host_in)
        os.close(host_out)
        host_in = accept_host_channel(channel_socket, identity)
        host_out = host_in
    # Network egress (egress_forwarder.py): 127.0.0.1:3128 relayed to the worker's proxy
    # on a Unix socket, by a process of the supervisor's user forked before any user code
    # runs. Without it the session just has no network.
    egress_socket = os.environ.get("DRYDOCK_EGRESS_SOCKET")
    if egress_socket:
        listen = os.environ.get("DRYDOCK_EGRESS_LISTEN") or DEFAULT_LISTEN
        if start_forwarder(egress_socket, listen, identity) is None:
            log("no network egress for this session")
    make_undumpable()

    session_dir = os.environ.get("DRYDOCK_SESSION_DIR", "/session")
    try:
        grace_ms = float(os.environ.get("DRYDOCK_INTERRUPT_GRACE_MS", "1000"))
    except ValueError:
        grace_ms = 1000.0
    override = os.environ.get("DRYDOCK_OOM_COUNTER_FILE")  # for tests
    oom_files = (override,) if override else OOM_COUNTER_FILES

    signal.signal(signal.SIGTERM, on_terminate)
    signal.signal(signal.SIGINT, on_terminate)
    scratch = os.environ.get("DRYDOCK_SCRATCH_DIRS")
    scratch_dirs = tuple(d for d in scratch.split(":") if d) if scratch is not None else DEFAULT_SCRATCH_DIRS
    supervisor = Supervisor(host_in, host_out, session_dir, grace_ms / 1000.0, oom_files, identity, scratch_dirs)
    return supervisor.run()


if __name__ == "__main__":
    sys.exit(main())
