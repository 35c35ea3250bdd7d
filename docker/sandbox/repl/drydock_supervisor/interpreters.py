"""Which Python runs what in a sandbox.

The supervisor, and the spawner that starts commands, run on the platform's own runtime
(/opt/drydock/runtime, built by docker/sandbox/runtime/make_runtime.py) through its own
dynamic loader: nothing a template did to the image's interpreter or its libraries runs
in them. User code (the kernel, the zygote it forks from) runs on the image's `python3`,
whose packages a template may have added to.

Outside an image (the unit tests run the supervisor with any python3), both are the
interpreter the supervisor runs on.
"""

from __future__ import annotations

import os
import shutil
import sys

RUNTIME = "/opt/drydock/runtime"
USER_PATH = "/usr/local/bin:/usr/bin:/bin"


def platform_python() -> list[str]:
    """The argv prefix that starts a Python like the supervisor's own."""
    if sys.executable == os.path.join(RUNTIME, "bin", "python3"):
        sysdir = os.path.join(RUNTIME, "sys")
        return [os.path.join(sysdir, "ld.so"), "--library-path", sysdir, sys.executable]
    return [sys.executable]


def user_python(env: dict[str, str]) -> str:
    """The image's python3 on the sandbox's PATH (DRYDOCK_USER_PYTHON if set)."""
    named = env.get("DRYDOCK_USER_PYTHON")
    if named:
        return named
    if platform_python() == [sys.executable]:
        return sys.executable
    return shutil.which("python3", path=env.get("PATH", USER_PATH)) or "/usr/bin/python3"
