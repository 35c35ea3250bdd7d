"""Letting the host checkpoint the sandbox (a gVisor `runsc checkpoint`, decision 018).

A checkpoint saves every process of the sandbox, but not what reaches outside it: the
host channel is a Unix socket on the Docker host, which gVisor cannot save. On
`checkpoint`, between execs, the supervisor answers `checkpoint-ready`, closes its end of
the channel and waits; the host then checkpoints the container (which stops it). What
restores the checkpoint, in a new container with a new channel folder, creates the file
`resume` in that folder: the supervisor listens on its socket again, takes the worker's
connection and announces itself with `ready` as on a start, `resumed` set. The same file
in the same folder cancels a checkpoint that failed: the session goes on where it was.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import time
from typing import Any

from .framing import MAX_HOST_FRAME, FrameReader, log
from .socket_channel import accept_host_channel, as_supervisor

RESUME_FILE = "resume"
# How often the waiting supervisor looks for the resume file. It waits only between the
# answer and the checkpoint (a few hundred ms) or, restored, until the worker connects.
RESUME_POLL_S = 0.01


class CheckpointMixin:
    """Part of Supervisor (event_loop.py): the `checkpoint` request."""

    def on_checkpoint(self, message: dict[str, Any]) -> None:
        request_id = message.get("id")
        if not isinstance(request_id, str):
            self.protocol_error("checkpoint needs a string id")
            return
        path = os.environ.get("DRYDOCK_CHANNEL_SOCKET")
        refusal: str | None = None
        if not path:
            refusal = "a checkpoint needs the socket channel"
        elif self.current is not None:
            refusal = "an exec is running"
        elif self.terminals:
            refusal = "a terminal is open"
        if refusal is not None:
            self.send({"ev": "checkpoint-refused", "id": request_id, "reason": refusal})
            return
        assert path is not None
        self.send({"ev": "checkpoint-ready", "id": request_id})
        self.selector.unregister(self.host_in)
        os.close(self.host_in)
        # Nothing follows the request on the channel: the host waits for the answer.
        self.host_frames = FrameReader(MAX_HOST_FRAME)
        resume = os.path.join(os.path.dirname(path), RESUME_FILE)
        # The channel folder is the supervisor's user's alone (mode 0700).
        with as_supervisor(self.identity):
            while not os.path.exists(resume):
                time.sleep(RESUME_POLL_S)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(resume)
        log("resuming: waiting for the host on the channel again")
        self.host_in = self.host_out = accept_host_channel(path, self.identity)
        self.selector.register(self.host_in, selectors.EVENT_READ, ("host", None))
        self.send({**self.ready_frame(), "resumed": True})
