"""The two-user layout (drydock_supervisor/privileges.py) and recycling
(drydock_supervisor/recycle.py), with the supervisor started as root the way the
container starts it. Runs only as root; the uids used are unlikely to own anything else
on the machine (kill(-1) from them reaches only their own processes)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
import unittest
from typing import Any

from repl_test_support import SYSTEM_PYTHON, Client

SANDBOX_UID = 61231
SUPERVISOR_UID = 61232


def ids_of(pid: int) -> tuple[list[int], list[int]]:
    uids: list[int] = []
    gids: list[int] = []
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("Uid:"):
                uids = [int(x) for x in line.split()[1:4]]
            elif line.startswith("Gid:"):
                gids = [int(x) for x in line.split()[1:4]]
    return uids, gids


@unittest.skipUnless(os.geteuid() == 0, "the supervisor drops root only when it starts as root")
class TestSeparation(unittest.TestCase):
    def setUp(self) -> None:
        self.scratch = tempfile.mkdtemp(prefix="drydock-scratch-")
        os.chown(self.scratch, SANDBOX_UID, SANDBOX_UID)
        self.addCleanup(shutil.rmtree, self.scratch, True)
        env = {
            "DRYDOCK_SANDBOX_UID": str(SANDBOX_UID),
            "DRYDOCK_SUPERVISOR_UID": str(SUPERVISOR_UID),
            "DRYDOCK_SCRATCH_DIRS": self.scratch,
        }
        self.repl = Client(env, python=SYSTEM_PYTHON, sandbox_uid=SANDBOX_UID)
        self.addCleanup(self.repl.close)

    def run_json(self, code: str) -> Any:
        done = self.repl.run(code)
        self.assertEqual(done["status"], "ok", done)
        return json.loads(done["stdout"])

    def recycle(self) -> dict[str, Any]:
        self.repl.send({"op": "recycle", "id": "r1"})
        frame = self.repl.next_frame()
        self.assertEqual((frame["ev"], frame["id"]), ("recycled", "r1"), frame)
        return frame

    def test_user_code_and_supervisor_run_as_different_users(self) -> None:
        supervisor = self.repl.ready["pid"]
        self.assertEqual(ids_of(supervisor), ([SUPERVISOR_UID, SANDBOX_UID, SUPERVISOR_UID], [SUPERVISOR_UID, SANDBOX_UID, SUPERVISOR_UID]))
        user = self.run_json("import os, json\nprint(json.dumps([os.getresuid(), os.getresgid(), os.getgroups()]))")
        self.assertEqual(user, [[SANDBOX_UID] * 3, [SANDBOX_UID] * 3, []])
        self.assertIn("recycle", self.repl.ready["features"])

    def test_user_code_cannot_signal_or_trace_the_supervisor(self) -> None:
        supervisor = self.repl.ready["pid"]
        code = f"""
import ctypes, errno, json, os, signal
out = {{}}
try:
    os.kill({supervisor}, signal.SIGSTOP)
    out["signal"] = "sent"
except PermissionError:
    out["signal"] = "EPERM"
libc = ctypes.CDLL(None, use_errno=True)
out["ptrace"] = libc.ptrace(16, {supervisor}, None, None)  # PTRACE_ATTACH
out["errno"] = errno.errorcode.get(ctypes.get_errno())
try:
    open("/proc/{supervisor}/mem", "rb")
    out["mem"] = "opened"
except OSError as exc:
    out["mem"] = errno.errorcode.get(exc.errno)
print(json.dumps(out))
"""
        self.assertEqual(self.run_json(code), {"signal": "EPERM", "ptrace": -1, "errno": "EPERM", "mem": "EACCES"})

    def test_kill_minus_one_from_user_code_keeps_the_session(self) -> None:
        self.repl.run("x = 42\nimport subprocess\np = subprocess.Popen(['sleep', '60'])")
        done = self.repl.run("import os, signal\nos.kill(-1, signal.SIGKILL)\nprint('still here')")
        self.assertEqual((done["status"], done["stdout"]), ("ok", "still here\n"), done)
        after = self.repl.run("print(x, p.wait())")
        self.assertEqual((after["status"], after["stateLost"], after["stdout"]), ("ok", False, "42 -9\n"), after)

    def test_recycle_leaves_nothing_of_a_hostile_run(self) -> None:
        scratch = self.scratch
        hostile = f"""
import os, subprocess, ctypes
secret = 1
os.makedirs("deep/er", exist_ok=True)
open("deep/er/f.txt", "w").write("x")
os.chmod("deep", 0o000)
open("{scratch}/left.txt", "w").write("x")
subprocess.Popen(["sleep", "300"], start_new_session=True)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        import time
        time.sleep(300)
    os._exit(0)
libc = ctypes.CDLL(None)
libc.shmget(0, 4096, 0o1600)  # IPC_PRIVATE | IPC_CREAT
print("left")
"""
        self.assertEqual(self.repl.run(hostile)["stdout"], "left\n")
        frame = self.recycle()
        self.assertEqual((frame["clean"], frame["problems"]), (True, []), frame)
        probe = f"""
import json, os
def real_uid(pid):
    try:
        lines = open(f"/proc/{{pid}}/status").read().splitlines()
        if any(l.startswith("State:") and l.split()[1] in ("Z", "X") for l in lines):
            return None  # a zombie is not a process that runs; init reaps it
        return int([l for l in lines if l.startswith("Uid:")][0].split()[1])
    except OSError:
        return None
procs = [p for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid() and real_uid(p) == os.getuid()]
shm = [l for l in open("/proc/sysvipc/shm").read().splitlines()[1:] if l.split()[7] == str(os.getuid())]
print(json.dumps({{"secret": "secret" in globals(), "session": os.listdir("."), "scratch": os.listdir("{scratch}"),
                  "procs": procs, "shm": shm}}))
"""
        self.assertEqual(self.run_json(probe), {"secret": False, "session": ["artifacts"], "scratch": [], "procs": [], "shm": []})

    def test_kernels_come_from_a_zygote_user_code_cannot_kill(self) -> None:
        zygote = int(self.repl.run("import os\nprint(os.getppid())")["stdout"])
        self.assertNotEqual(zygote, self.repl.ready["pid"])
        self.assertEqual(ids_of(zygote)[0], [SUPERVISOR_UID, SANDBOX_UID, SUPERVISOR_UID])
        self.repl.run("import os, signal\nos.kill(-1, signal.SIGKILL)")
        self.assertTrue(self.recycle()["clean"])
        # The next kernel is forked by the same zygote: it survived.
        self.assertEqual(int(self.repl.run("import os\nprint(os.getppid())")["stdout"]), zygote)

    def test_recycle_not_clean_once_user_code_slowed_the_supervisor(self) -> None:
        # Allowed to user code (only effective uids are compared) and irreversible
        # without privilege: the sandbox must be destroyed, not reused.
        supervisor = self.repl.ready["pid"]
        self.assertEqual(self.repl.run(f"import os\nos.setpriority(os.PRIO_PROCESS, {supervisor}, 19)")["status"], "ok")
        frame = self.recycle()
        self.assertFalse(frame["clean"], frame)
        self.assertEqual(frame["problems"], [f"process {supervisor} of the supervisor's user was rescheduled (policy, nice or CPUs)"])

    def test_recycle_refused_during_an_exec(self) -> None:
        exec_id = self.repl.start("import time\ntime.sleep(1)")
        frame = self.recycle()
        self.assertFalse(frame["clean"])
        self.assertEqual(self.repl.wait_done(exec_id)[0]["status"], "ok")


class TestWithoutSeparation(unittest.TestCase):
    def test_recycle_is_not_offered_and_refused(self) -> None:
        repl = Client()
        self.addCleanup(repl.close)
        self.assertNotIn("recycle", repl.ready.get("features"))
        repl.send({"op": "recycle", "id": "r1"})
        frame = repl.next_frame()
        self.assertEqual((frame["ev"], frame["clean"]), ("recycled", False))
        self.assertTrue(frame["problems"])



class TestZygoteWithoutTheSandboxId(unittest.TestCase):
    def test_a_zygote_that_exec_left_without_the_sandbox_id_forks_nothing(self) -> None:
        # As under gVisor, whose execve sets the effective ids to the real ones: the
        # layout is asked for (DRYDOCK_SANDBOX_UID) but this process has one id only. Its
        # kernels would run as the supervisor's user: it must refuse instead.
        import socket
        import subprocess

        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.addCleanup(ours.close)
        kernel = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernel.py")
        env = {**os.environ, "DRYDOCK_SANDBOX_UID": str(os.getuid() + 1)}
        proc = subprocess.Popen([SYSTEM_PYTHON, kernel, "--zygote", str(theirs.fileno())], pass_fds=(theirs.fileno(),), env=env)
        theirs.close()
        ours.settimeout(30)
        hello = json.loads(ours.recv(4096))
        self.assertEqual(hello["ev"], "unavailable")
        self.assertIn(f"uid {os.getuid()}", hello["reason"])
        self.assertEqual(proc.wait(timeout=30), 0)


if __name__ == "__main__":
    unittest.main()
