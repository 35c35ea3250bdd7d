"""Commands and background processes in a session's sandbox."""

from __future__ import annotations

from drydock import CommandResult, ProcessExit, ProcessHandle, ProcessInfo, Session
from support import LiveTestCase, thread_id


class CommandsTest(LiveTestCase):
    session: Session

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls.session = cls.dd.sessions.create(thread_id=thread_id("cmd"))

    @classmethod
    def tearDownClass(cls) -> None:
        cls.session.delete()
        super().tearDownClass()

    def test_a_shell_line_returns_its_exit_code_and_output(self) -> None:
        ok = self.session.commands.run("echo out; echo err >&2")
        self.assertIsInstance(ok, CommandResult)
        self.assertEqual((ok.status, ok.exit_code, ok.stdout, ok.stderr), ("ok", 0, "out\n", "err\n"))
        failed = self.session.commands.run("exit 3")
        self.assertEqual((failed.status, failed.exit_code), ("error", 3))

    def test_argv_env_cwd_and_stdin(self) -> None:
        self.session.files.write("/work/in.txt", "x")
        run = self.session.commands.run(["python3", "-c", "import os,sys; print(os.getcwd(), os.environ['GREETING'], sys.stdin.read())"], cwd="/session/work", env={"GREETING": "hi"}, stdin="piped")
        self.assertEqual(run.stdout, "/session/work hi piped\n")

    def test_a_command_past_its_time_limit_is_timeout(self) -> None:
        run = self.session.commands.run("sleep 10", timeout_ms=500)
        self.assertEqual(run.status, "timeout")

    def test_a_streamed_command_calls_back_before_it_ends(self) -> None:
        # As for runs (test_sessions): the command goes on only once the client had its
        # first chunk, told through a background process.
        relay = self.session.commands.run("read line; touch /tmp/cmd-seen", background=True)
        seen: list[str] = []
        err: list[str] = []

        def on_stdout(text: str) -> None:
            if not seen:
                relay.send_stdin("seen\n")
            seen.append(text)

        run = self.session.commands.run(
            "echo one; echo two >&2; for i in $(seq 400); do [ -e /tmp/cmd-seen ] && break; sleep 0.05; done; [ -e /tmp/cmd-seen ] && echo three || echo unseen",
            on_stdout=on_stdout,
            on_stderr=err.append,
        )
        self.assertEqual(run.exit_code, 0)
        self.assertEqual("".join(seen), "one\nthree\n")
        self.assertEqual("".join(err), "two\n")

    def test_a_background_process_takes_stdin_and_reports_its_exit(self) -> None:
        out: list[str] = []
        handle = self.session.commands.run("cat; echo done; exit 4", background=True, on_stdout=out.append)
        self.assertIsInstance(handle, ProcessHandle)
        self.assertIsInstance(handle.pid, int)
        handle.send_stdin("hello\n")
        handle.close_stdin()
        exit = handle.wait()
        self.assertIsInstance(exit, ProcessExit)
        self.assertEqual(exit.exit_code, 4)
        self.assertEqual("".join(out), "hello\ndone\n")
        info = handle.info()
        self.assertIsInstance(info, ProcessInfo)
        self.assertEqual((info.status, info.exit_code), ("exited", 4))
        self.assertIn(handle.id, [p.id for p in self.session.commands.list()])
        # A handle made later reads the kept output from the start.
        again: list[str] = []
        self.assertEqual(self.session.commands.process(handle.id).output(on_stdout=again.append).exit_code, 4)
        self.assertEqual("".join(again), "hello\ndone\n")

    def test_kill_signals_a_background_process(self) -> None:
        handle = self.session.commands.run(["sleep", "60"], background=True)
        self.assertTrue(handle.kill("SIGTERM"))
        exit = handle.wait()
        self.assertEqual(exit.signal, "SIGTERM")
