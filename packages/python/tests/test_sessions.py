"""Sessions and runs against the real platform: create, run, streaming, interrupt, delete."""

from __future__ import annotations

import threading
import time

from drydock import DrydockError, Execution, RichResult, Session, SessionInfo
from harness import admin
from support import LiveTestCase, platform, thread_id


class SessionsTest(LiveTestCase):
    def test_quick_start_runs_code_and_keeps_variables(self) -> None:
        s = self.dd.sessions.create(thread_id=thread_id())
        try:
            run = s.run("x = 6\nx * 7")
            self.assertIsInstance(run, Execution)
            self.assertEqual(run.status, "ok")
            self.assertIsInstance(run.result, RichResult)
            assert run.result is not None
            self.assertEqual(run.result.text, "42")
            self.assertEqual(str(run.result), "42")
            self.assertEqual(s.run("x + 1").result.text, "7")  # type: ignore[union-attr]
            self.assertEqual(run.session_id, s.id)
            self.assertEqual(run.thread_id, s.thread_id)
            self.assertIsInstance(run.duration_ms, int)
        finally:
            s.delete()

    def test_a_thread_with_a_live_session_gets_that_session_back(self) -> None:
        tid = thread_id()
        first = self.dd.sessions.create(thread_id=tid, limits={"memory_mb": 256})
        try:
            again = self.dd.sessions.create(thread_id=tid)
            self.assertEqual(again.id, first.id)
            self.assertIsInstance(first.info, SessionInfo)
            self.assertEqual(first.info.thread_id, tid)
            assert first.info.limits is not None
            self.assertEqual(first.info.limits.memory_mb, 256)
            got = self.dd.sessions.get(first.id)
            self.assertEqual(got.thread_id, tid)
            self.assertIn(first.id, [x.id for x in self.dd.sessions.list()])
            self.assertEqual(first.refresh().id, first.id)
        finally:
            first.delete()

    def test_a_new_session_without_a_thread_gets_a_new_thread_id(self) -> None:
        with self.dd.sessions.create() as s:
            self.assertTrue(s.thread_id)
            self.assertEqual(s.run("1 + 1").result.text, "2")  # type: ignore[union-attr]

    def test_a_python_exception_is_a_record_not_a_raise(self) -> None:
        with self.dd.sessions.create(thread_id=thread_id()) as s:
            run = s.run("1 / 0")
            self.assertEqual(run.status, "error")
            assert run.error is not None
            self.assertEqual(run.error.name, "ZeroDivisionError")
            self.assertIn("division", run.error.value)
            self.assertIn("Traceback", run.error.traceback)
            self.assertIsNone(run.result)

    def test_a_run_past_its_time_limit_is_timeout(self) -> None:
        with self.dd.sessions.create(thread_id=thread_id()) as s:
            run = s.run("import time\ntime.sleep(10)", timeout_ms=700)
            self.assertEqual(run.status, "timeout")

    def test_streaming_delivers_the_first_stdout_chunk_before_the_run_ends(self) -> None:
        with self.dd.sessions.create(thread_id=thread_id()) as s:
            # The code goes on only once the client has had its first chunk: the callback
            # answers through a background process (a file the code waits for, 20 s at
            # most), so a stream that delivered only at the end would print "unseen".
            relay = s.commands.run("read line; touch /tmp/seen", background=True)
            out: list[str] = []
            err: list[str] = []

            def on_stdout(text: str) -> None:
                if not out:
                    relay.send_stdin("seen\n")
                out.append(text)

            code = (
                "import os, sys, time\nprint('first', flush=True)\nprint('oops', file=sys.stderr, flush=True)\n"
                "for _ in range(400):\n    if os.path.exists('/tmp/seen'): break\n    time.sleep(0.05)\n"
                "print('seen' if os.path.exists('/tmp/seen') else 'unseen')\n6 * 7"
            )
            run = s.run(code, on_stdout=on_stdout, on_stderr=err.append)
            self.assertEqual(run.stdout, "first\nseen\n")
            self.assertEqual("".join(out), "first\nseen\n")
            self.assertEqual("".join(err), "oops\n")
            self.assertEqual(run.result.text, "42")  # type: ignore[union-attr]
            self.assertEqual(relay.wait().exit_code, 0)

    def test_interrupt_stops_the_running_code_and_keeps_the_variables(self) -> None:
        with self.dd.sessions.create(thread_id=thread_id()) as s:
            s.run("kept = 'yes'")
            outcome: list[Execution] = []
            started = threading.Event()

            def on_stdout(_text: str) -> None:
                started.set()

            worker = threading.Thread(target=lambda: outcome.append(s.run("import time\nprint('go', flush=True)\ntime.sleep(60)", on_stdout=on_stdout)))
            worker.start()
            self.assertTrue(started.wait(20), "the long run did not start")
            stopped = s.interrupt()
            worker.join(20)
            self.assertFalse(worker.is_alive(), "interrupt did not stop the run")
            self.assertEqual(len(stopped), 1)
            self.assertEqual(outcome[0].id, stopped[0])
            self.assertNotEqual(outcome[0].status, "ok")
            self.assertEqual(s.run("kept").result.text, "'yes'")  # type: ignore[union-attr]
            # The record is kept: executions.get finds it; interrupting it again asks nothing.
            self.assertEqual(self.dd.executions.get(stopped[0]).id, stopped[0])
            self.assertFalse(self.dd.executions.interrupt(stopped[0]).requested)

    def test_executions_interrupt_stops_one_run_by_id(self) -> None:
        with self.dd.sessions.create(thread_id=thread_id()) as s:
            outcome: list[Execution] = []
            started = threading.Event()
            worker = threading.Thread(
                target=lambda: outcome.append(s.run("import time\nprint('go', flush=True)\ntime.sleep(60)", on_stdout=lambda _t: started.set()))
            )
            worker.start()
            self.assertTrue(started.wait(20), "the long run did not start")
            # The running run's id, as an operator sees it (a run's id comes with its end).
            p = platform()
            _, page = admin(p.url, p.admin_key, "GET", "/admin/executions?limit=50")
            running = [e["id"] for e in page["executions"] if e.get("sessionId") == s.id and e["status"] in ("queued", "running")]
            self.assertEqual(len(running), 1, page)
            answer = self.dd.executions.interrupt(running[0])
            self.assertTrue(answer.requested)
            worker.join(20)
            self.assertFalse(worker.is_alive())
            self.assertEqual(outcome[0].id, running[0])
            self.assertEqual(self.dd.executions.get(running[0]).status, outcome[0].status)

    def test_delete_ends_the_session(self) -> None:
        s = self.dd.sessions.create(thread_id=thread_id())
        s.delete()
        with self.assertRaises(DrydockError) as caught:
            s.run("1")
        self.assertIn(caught.exception.code, ("SESSION_ENDED", "SESSION_NOT_FOUND"))
        self.assertGreaterEqual(caught.exception.status, 400)
        self.assertNotIn(s.id, [x.id for x in self.dd.sessions.list()])
        self.assertIn(s.id, [x.id for x in self.dd.sessions.list(include_ended=True)])
        self.assertIsInstance(s, Session)

    def test_one_client_serves_many_threads(self) -> None:
        from concurrent.futures import ThreadPoolExecutor

        def work(i: int) -> str:
            s = self.dd.sessions.create(thread_id=thread_id("pool"))
            try:
                s.files.write("/n.txt", str(i))
                return s.run("int(open('/session/n.txt').read()) * 10").result.text  # type: ignore[union-attr]
            finally:
                s.delete()

        with ThreadPoolExecutor(4) as pool:
            self.assertEqual(list(pool.map(work, range(4))), ["0", "10", "20", "30"])
