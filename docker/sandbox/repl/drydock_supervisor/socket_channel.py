"""The host channel over a Unix socket instead of the container's stdin/stdout.

With DRYDOCK_CHANNEL_SOCKET set (the worker sets it when SANDBOX_CHANNEL_DIR is
configured), the supervisor listens on that path and takes the first connection as its
host channel: the same length-prefixed frames, but straight between the worker and the
supervisor, not copied through dockerd and containerd-shim as an attached stream is.

The socket's directory is a bind mount from the Docker host, owned by the supervisor's
user and closed to everyone else (mode 0700), so user code (the sandbox user) can neither
connect to the socket nor replace it. The supervisor's effective id is the sandbox user's
(privileges.py); it takes its own user's id just long enough to create the socket.
"""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Iterator

from .framing import log
from .privileges import Identity

DEFAULT_ACCEPT_TIMEOUT_S = 60.0


def accept_timeout_s() -> float:
    try:
        return float(os.environ.get("DRYDOCK_CHANNEL_ACCEPT_TIMEOUT_S", DEFAULT_ACCEPT_TIMEOUT_S))
    except ValueError:
        return DEFAULT_ACCEPT_TIMEOUT_S


@contextlib.contextmanager
def as_supervisor(identity: Identity) -> Iterator[None]:
    if not identity.separated:
        yield
        return
    # From (supervisor, sandbox, supervisor) to (supervisor, supervisor, sandbox) and back:
    # the sandbox user's id waits in the saved slot, since a process without capabilities
    # may only take ids it holds in one of the three. No user code runs yet.
    real, sandbox, saved = os.getresuid()
    os.setresuid(real, identity.supervisor_uid, sandbox)
    try:
        yield
    finally:
        os.setresuid(real, sandbox, saved)


def accept_host_channel(path: str, identity: Identity, timeout_s: float | None = None) -> int:
    """Listens on `path`, waits for the worker, returns the connection's fd (blocking).

    Raises SystemExit when the socket cannot be made or nobody connects in time: without
    its host the supervisor has nothing to do.
    """
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        with as_supervisor(identity):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
            listener.bind(path)
            os.chmod(path, 0o600)
        listener.listen(1)
        listener.settimeout(accept_timeout_s() if timeout_s is None else timeout_s)
        conn, _ = listener.accept()
    except (OSError, TimeoutError) as exc:
        log(f"no host channel on {path}: {exc}")
        raise SystemExit(1) from None
    finally:
        listener.close()
    fd = conn.detach()
    os.set_blocking(fd, True)
    return fd
