"""Two users in one sandbox: user code runs as the sandbox user, the supervisor as a
user of its own (docs/decisions/007-sandbox-process-separation.md).

The container starts as root with only CAP_SETUID and CAP_SETGID (and no-new-privileges).
The supervisor then sets its ids to (real, effective, saved) = (supervisor, sandbox,
supervisor), for users and groups alike, with no supplementary groups. No id is 0 any
more, so the kernel drops every capability the process had. Its effective id is the
sandbox user's: whatever it creates or deletes under /session it does as that user, as
before. And:

- it can still signal the kernel and its children (a sender's effective uid equal to the
  target's real uid is enough), and spawn the kernel as the plain sandbox user
  (setreuid(sandbox, sandbox) from these ids needs no privilege);
- user code (real, effective and saved = sandbox) can neither signal it (that needs the
  sender's uid to equal the target's real or saved uid: the supervisor's) nor ptrace it
  or read its memory (that needs all three to match, and it is not dumpable);
- `os.kill(-1, SIGKILL)` from user code reaches user processes only (and never the
  caller itself): the kernel survives, its variables too.

The layout applies when the supervisor starts as root and DRYDOCK_SANDBOX_UID is set (the
sandbox image sets it, with DRYDOCK_SUPERVISOR_UID). Started as non-root (an older
container spec), or without it (the tests on a host), nothing changes: one user for
everything, as before.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from .framing import log

DEFAULT_SANDBOX_ID = 10001
DEFAULT_SUPERVISOR_ID = 10002


@dataclass(frozen=True)
class Identity:
    # Whose processes user code runs as; None: the supervisor's own (no separation).
    sandbox_uid: int | None
    sandbox_gid: int | None
    supervisor_uid: int

    @property
    def separated(self) -> bool:
        return self.sandbox_uid is not None


def _env_id(name: str, default: int) -> int:
    try:
        value = int(os.environ.get(name, str(default)))
    except ValueError:
        value = default
    return value


def separate() -> Identity:
    """Drops root for the two-user layout when started as root; see the module doc.

    Raises SystemExit when the ids cannot be set: running user code with the
    supervisor's privileges is never the fallback.
    """
    if os.geteuid() != 0 or "DRYDOCK_SANDBOX_UID" not in os.environ:
        return Identity(None, None, os.getuid())
    sandbox = _env_id("DRYDOCK_SANDBOX_UID", DEFAULT_SANDBOX_ID)
    supervisor = _env_id("DRYDOCK_SUPERVISOR_UID", DEFAULT_SUPERVISOR_ID)
    if sandbox <= 0 or supervisor <= 0 or sandbox == supervisor:
        log(f"refusing to run: sandbox uid {sandbox} and supervisor uid {supervisor} must differ and not be 0")
        raise SystemExit(1)
    try:
        os.setgroups([])
        os.setresgid(supervisor, sandbox, supervisor)
        os.setresuid(supervisor, sandbox, supervisor)
    except OSError as exc:
        log(f"refusing to run: cannot separate the supervisor from user code: {exc}")
        raise SystemExit(1) from None
    if os.getresuid() != (supervisor, sandbox, supervisor) or os.getresgid() != (supervisor, sandbox, supervisor):
        log("refusing to run: the supervisor's ids are not what was set")
        raise SystemExit(1)
    return Identity(sandbox, sandbox, supervisor)


def become_sandbox_user(identity: Identity) -> None:
    """In a child about to run user code: the plain sandbox user, nothing else."""
    if identity.sandbox_uid is None or identity.sandbox_gid is None:
        return
    os.setregid(identity.sandbox_gid, identity.sandbox_gid)
    os.setreuid(identity.sandbox_uid, identity.sandbox_uid)
