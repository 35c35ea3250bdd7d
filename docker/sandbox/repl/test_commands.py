"""Commands (commands.py): a process run beside the kernel, with its exit code, output,
stdin, cwd and env; timeouts and interrupts that end its whole group and leave the
kernel's variables alone; what it leaves running is killed; its files are reported."""

from __future__ import annotations

import os
import time
import unittest

from repl_test_support import SYSTEM_PYTHON, Client, ReplTestCase, pid_alive
from test_separation import SANDBOX_UID, SUPERVISOR_UID


class TestCommands(ReplTestCase):
    def test_ready_announces_commands(self) -> None:
        self.assertIn("commands", self.repl.ready["features"])

    def test_exit_code_output_and_record_shape(self) -> None:
        done = self.repl.shell("echo out; echo err >&2; exit 3")
        self.assertEqual((done["status"], done["exitCode"], done["signal"]), ("error", 3, None))
        self.assertEqual((done["stdout"], done["stderr"]), ("out\n", "err\n"))
        self.assertIsNone(done["result"])
        self.assertIsNone(done["error"])
        ok = self.repl.run_command(["true"])
        self.assertEqual((ok["status"], ok["exitCode"]), ("ok", 0))

    def test_streams_output_as_it_comes(self) -> None:
        exec_id = self.repl.start_command(["/bin/bash", "-c", "echo one; sleep 0.3; echo two"])
        done, seen = self.repl.wait_done(exec_id)
        streamed = [f["text"] for _, f in seen if f.get("ev") == "stream" and f.get("name") == "stdout"]
        self.assertEqual("".join(streamed), "one\ntwo\n")
        self.assertGreaterEqual(len(streamed), 2)  # "one" came before "two" was written
        self.assertEqual(done["stdout"], "one\ntwo\n")

    def test_stdin_cwd_and_env(self) -> None:
        os.mkdir(os.path.join(self.repl.dir, "sub"))
        done = self.repl.run_command(
            ["/bin/bash", "-c", 'pwd; echo "$GREETING"; tr a-z A-Z; echo "$HOME"'],
            cwd=os.path.join(self.repl.dir, "sub"),
            env={"GREETING": "hello there"},
            stdin="piped in\n",
        )
        self.assertEqual(done["status"], "ok", done)
        lines = done["stdout"].splitlines()
        self.assertEqual(os.path.realpath(lines[0]), os.path.realpath(os.path.join(self.repl.dir, "sub")))
        self.assertEqual(lines[1:3], ["hello there", "PIPED IN"])
        self.assertEqual(lines[3], self.repl.dir)

    def test_without_stdin_reads_end_of_file(self) -> None:
        done = self.repl.run_command(["cat"], timeout_ms=5_000)
        self.assertEqual((done["status"], done["stdout"]), ("ok", ""))

    def test_large_stdin_does_not_deadlock(self) -> None:
        data = "x" * (4 << 20)
        done = self.repl.run_command(["wc", "-c"], stdin=data, timeout_ms=20_000)
        self.assertEqual((done["status"], done["stdout"].strip()), ("ok", str(len(data))))

    def test_missing_program_and_missing_cwd(self) -> None:
        done = self.repl.run_command(["no-such-program-here"])
        self.assertEqual((done["status"], done["exitCode"]), ("error", 127))
        self.assertIn("no-such-program-here", done["stderr"])
        done = self.repl.run_command(["true"], cwd=os.path.join(self.repl.dir, "absent"))
        self.assertEqual((done["status"], done["exitCode"]), ("error", 1))
        self.assertIn("cannot start in", done["stderr"])

    def test_signal_reported(self) -> None:
        done = self.repl.shell("kill -TERM $$")
        self.assertEqual((done["status"], done["exitCode"], done["signal"]), ("error", None, "SIGTERM"))

    def test_timeout_kills_the_group_and_the_kernel_keeps_its_variables(self) -> None:
        self.assertEqual(self.repl.run("x = 41")["status"], "ok")
        pidfile = os.path.join(self.repl.dir, "child.pid")
        done = self.repl.shell(f"sleep 60 & echo $! > {pidfile}; sleep 60", timeout_ms=500)
        self.assertEqual((done["status"], done["exitCode"], done["signal"]), ("timeout", None, "SIGKILL"))
        self.assertEqual(done["error"]["name"], "TimeoutError")
        with open(pidfile) as f:
            child = int(f.read())
        self.assertFalse(pid_alive(child))
        after = self.repl.run("x + 1")
        self.assertEqual((after["result"]["text"], after["stateLost"]), ("42", False))

    def test_leftover_children_are_killed_when_it_returns(self) -> None:
        pidfile = os.path.join(self.repl.dir, "bg.pid")
        done = self.repl.shell(f"(sleep 60; echo late) & echo $! > {pidfile}; echo started")
        self.assertEqual((done["status"], done["stdout"]), ("ok", "started\n"))
        with open(pidfile) as f:
            child = int(f.read())
        deadline = time.monotonic() + 2
        while pid_alive(child) and time.monotonic() < deadline:
            time.sleep(0.02)
        self.assertFalse(pid_alive(child))
        # Nothing of it reaches the next run.
        self.assertEqual(self.repl.run("print('next')")["stdout"], "next\n")

    def test_interrupt_sends_sigint_to_the_group(self) -> None:
        exec_id = self.repl.start_command(["/bin/bash", "-c", "trap 'echo got-int; exit 130' INT; while :; do sleep 0.05; done"])
        time.sleep(0.3)
        self.repl.send({"op": "interrupt", "id": exec_id})
        done, _ = self.repl.wait_done(exec_id)
        self.assertEqual((done["status"], done["exitCode"]), ("error", 130))
        self.assertIn("got-int", done["stdout"])

    def test_output_is_capped(self) -> None:
        done = self.repl.shell("head -c 5000000 /dev/zero | tr '\\0' a", max_output=1000)
        self.assertEqual(done["status"], "ok")
        self.assertTrue(done["truncated"])
        self.assertEqual(len(done["stdout"]), 1000)

    def test_files_written_are_reported(self) -> None:
        done = self.repl.shell("mkdir -p out && echo hi > out/a.txt && echo art > artifacts/r.txt")
        self.assertEqual(done["status"], "ok", done)
        self.assertIn("/out/a.txt", done["files"]["changed"])
        self.assertEqual([f["path"] for f in done["artifacts"]["files"]], ["/artifacts/r.txt"])

    def test_kernel_output_during_a_command_is_not_the_commands(self) -> None:
        self.assertEqual(self.repl.run("import threading, time, sys\n"
                                       "def chatter():\n"
                                       "    for _ in range(40):\n"
                                       "        print('kernel-noise', flush=True); time.sleep(0.01)\n"
                                       "threading.Thread(target=chatter, daemon=True).start()")["status"], "ok")
        done = self.repl.shell("sleep 0.2; echo mine")
        self.assertEqual(done["stdout"], "mine\n")

    def test_signals_are_at_their_defaults_and_path_is_the_commands(self) -> None:
        # SIGPIPE is not ignored (Python ignores it): `yes` ends when `head` is done.
        done = self.repl.shell("yes | head -n 2", timeout_ms=5_000)
        self.assertEqual((done["status"], done["stdout"]), ("ok", "y\ny\n"))
        bin_dir = os.path.join(self.repl.dir, "bin")
        os.mkdir(bin_dir)
        with open(os.path.join(bin_dir, "hello-tool"), "w") as f:
            f.write("#!/bin/sh\necho from-my-path\n")
        os.chmod(os.path.join(bin_dir, "hello-tool"), 0o755)
        done = self.repl.run_command(["hello-tool"], env={"PATH": f"{bin_dir}:/usr/bin:/bin"})
        self.assertEqual((done["status"], done["stdout"]), ("ok", "from-my-path\n"))

    def test_many_quick_commands_in_a_row(self) -> None:
        for i in range(50):
            done = self.repl.run_command(["echo", str(i)])
            self.assertEqual((done["status"], done["stdout"]), ("ok", f"{i}\n"))

    def test_invalid_command_is_rejected(self) -> None:
        self.repl.send({"op": "exec", "id": "bad", "command": {"argv": []}, "timeoutMs": 1000, "maxOutputBytes": 10})
        frame = self.repl.next_frame()
        self.assertEqual((frame["ev"], frame["id"]), ("done", "bad"))
        self.assertEqual(frame["error"]["name"], "InvalidRequest")


@unittest.skipUnless(os.geteuid() == 0, "the sandbox user exists only when the supervisor starts as root")
class TestCommandsAsSandboxUser(unittest.TestCase):
    def setUp(self) -> None:
        env = {"DRYDOCK_SANDBOX_UID": str(SANDBOX_UID), "DRYDOCK_SUPERVISOR_UID": str(SUPERVISOR_UID)}
        self.repl = Client(env, python=SYSTEM_PYTHON, sandbox_uid=SANDBOX_UID)
        self.addCleanup(self.repl.close)

    def test_runs_as_the_plain_sandbox_user(self) -> None:
        done = self.repl.shell("id -u; id -G; grep -E '^(Uid|Gid)' /proc/self/status")
        self.assertEqual(done["status"], "ok", done)
        lines = done["stdout"].splitlines()
        self.assertEqual(lines[0], str(SANDBOX_UID))
        self.assertEqual(lines[1], str(SANDBOX_UID))
        for line in lines[2:]:
            self.assertEqual(line.split()[1:], [str(SANDBOX_UID)] * 4, line)

    def test_commands_go_on_after_the_spawner_is_killed(self) -> None:
        self.assertEqual(self.repl.shell("true")["status"], "ok")  # the spawner runs now
        spawners = self.repl.shell("pgrep -f drydock_supervisor/spawner.py || true")["stdout"].split()
        self.assertTrue(spawners, "no spawner process")
        self.repl.shell(f"kill -9 {' '.join(spawners)}")
        for _ in range(5):
            done = self.repl.shell("echo still")
            self.assertEqual((done["status"], done["exitCode"], done["stdout"]), ("ok", 0, "still\n"))

    def test_kill_everything_spares_the_supervisor(self) -> None:
        done = self.repl.shell("kill -9 -1; echo survived")
        self.assertIn(done["status"], ("ok", "error"))
        self.assertTrue(pid_alive(self.repl.ready["pid"]))
        # The session answers; the kernel may have been killed with everything else.
        after = self.repl.run("print('alive')")
        self.assertEqual((after["status"], after["stdout"]), ("ok", "alive\n"))


if __name__ == "__main__":
    unittest.main()
