"""One DrydockError with the platform's stable code, the status and the request id; retries
only where repeating is safe (a local stand-in gateway counts the attempts)."""

from __future__ import annotations

import asyncio
import http.server
import json
import pickle
import threading
import unittest
from typing import Any

from drydock import AsyncDrydock, Drydock, DrydockError, RetryPolicy
from support import LiveTestCase, platform, thread_id


class PlatformErrorsTest(LiveTestCase):
    def test_a_bad_key_is_401_with_a_code_and_a_request_id(self) -> None:
        with Drydock(url=self.dd.url, api_key="ddk_not-a-key") as bad, self.assertRaises(DrydockError) as caught:
            bad.sessions.list()
        e = caught.exception
        self.assertEqual(e.status, 401)
        self.assertEqual(e.code, "INVALID_API_KEY")
        self.assertTrue(e.request_id)
        self.assertIn(e.code, str(e))

    def test_not_found_is_404_with_its_code(self) -> None:
        for call, code in [
            (lambda: self.dd.sessions.get("ses_nope"), "SESSION_NOT_FOUND"),
            (lambda: self.dd.executions.get("exe_nope"), "EXECUTION_NOT_FOUND"),
            (lambda: self.dd.artifacts.get("art_nope"), "ARTIFACT_NOT_FOUND"),
            (lambda: self.dd.batches.get("bat_nope"), "BATCH_NOT_FOUND"),
            (lambda: self.dd.templates.get("nope"), "TEMPLATE_NOT_FOUND"),
            (lambda: self.dd.files(thread_id()).download("/missing.txt"), "FILE_NOT_FOUND"),
        ]:
            with self.subTest(code=code):
                with self.assertRaises(DrydockError) as caught:
                    call()
                self.assertEqual((caught.exception.code, caught.exception.status), (code, 404))
                self.assertTrue(caught.exception.request_id)

    def test_bad_input_is_400_validation_failed_with_details(self) -> None:
        with self.assertRaises(DrydockError) as caught:
            self.dd.sessions.create(thread_id=thread_id(), limits={"memory_mb": -5})
        self.assertEqual((caught.exception.code, caught.exception.status), ("VALIDATION_FAILED", 400))

    def test_an_ambiguous_edit_is_409_or_422_with_its_code(self) -> None:
        files = self.dd.files(thread_id())
        files.write("/a.txt", "x x")
        with self.assertRaises(DrydockError) as caught:
            files.edit("/a.txt", "x", "y")
        self.assertEqual(caught.exception.code, "AMBIGUOUS_MATCH")
        self.assertGreaterEqual(caught.exception.status, 400)

    def test_the_async_client_raises_the_same_error(self) -> None:
        async def main() -> DrydockError:
            async with AsyncDrydock(url=self.dd.url, api_key=self.key) as dd:
                try:
                    await dd.sessions.get("ses_nope")
                except DrydockError as error:
                    return error
            raise AssertionError("no error")

        e = asyncio.run(main())
        self.assertEqual((e.code, e.status), ("SESSION_NOT_FOUND", 404))
        self.assertTrue(e.request_id)

    def test_no_answer_is_network_error_with_status_0(self) -> None:
        dd = Drydock(url="http://127.0.0.1:9", api_key="k", retry=1, connect_timeout=2)
        with self.assertRaises(DrydockError) as caught:
            dd.sessions.list()
        self.assertEqual((caught.exception.code, caught.exception.status), ("NETWORK_ERROR", 0))

    def test_a_closed_client_refuses_calls(self) -> None:
        dd = Drydock(url=self.dd.url, api_key=self.key)
        dd.sessions.list()
        dd.close()
        with self.assertRaises(DrydockError) as caught:
            dd.sessions.list()
        self.assertEqual(caught.exception.code, "CLIENT_CLOSED")

    def test_a_read_timeout_is_network_error_and_a_run_is_not_repeated(self) -> None:
        with Drydock(url=self.dd.url, api_key=self.key, timeout=0.5) as impatient:
            s = impatient.sessions.create(thread_id=thread_id())
            try:
                with self.assertRaises(DrydockError) as caught:
                    s.run("import time\ntime.sleep(1.5)\ncount = globals().get('count', 0) + 1")
                self.assertEqual((caught.exception.code, caught.exception.status), ("NETWORK_ERROR", 0))
                self.assertIn("timed out", caught.exception.message)
                # The code ran once (this run waits behind it): the timed-out POST was not sent again.
                self.assertEqual(self.dd.sessions.get(s.id).run("count").result.text, "1")  # type: ignore[union-attr]
            finally:
                self.dd.sessions.get(s.id).delete()

    def test_errors_pickle_with_their_fields(self) -> None:
        e = DrydockError("SESSION_ENDED", "gone", 409, {"a": 1}, "req-1")
        back = pickle.loads(pickle.dumps(e))
        self.assertEqual((back.code, back.message, back.status, back.details, back.request_id), ("SESSION_ENDED", "gone", 409, {"a": 1}, "req-1"))


class _Gateway(http.server.BaseHTTPRequestHandler):
    """Answers 503 (Retry-After: 0) to the first ``fail`` requests, then 200."""

    protocol_version = "HTTP/1.1"
    fail = 0
    seen: list[tuple[str, str]] = []

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        type(self).seen.append((self.command, self.path))
        if type(self).fail > 0:
            type(self).fail -= 1
            body = json.dumps({"error": {"code": "SERVICE_UNAVAILABLE", "message": "restarting"}}).encode()
            self.send_response(503)
            self.send_header("Retry-After", "0")
        else:
            body = json.dumps(_ANSWERS.get(self.path.split("?")[0], {})).encode()
            self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Request-Id", "req-test")
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_DELETE = _answer

    def log_message(self, *args: Any) -> None:
        pass


_RECORD = {
    "id": "exe_1", "sessionId": "ses_1", "threadId": "t", "kind": "python", "status": "ok", "stdout": "", "stderr": "",
    "truncated": False, "result": {"text": "1"}, "error": None, "stateLost": False, "files": {"changed": [], "deleted": []},
    "artifacts": [], "durationMs": 1, "createdAt": "2026-01-01T00:00:00Z",
}
_ANSWERS: dict[str, Any] = {"/v1/sessions": {"sessions": []}, "/v1/sessions/ses_1/executions": _RECORD}


class RetriesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Gateway)
        threading.Thread(target=cls.server.serve_forever, daemon=True).start()
        cls.url = f"http://127.0.0.1:{cls.server.server_address[1]}"

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.shutdown()
        cls.server.server_close()

    def setUp(self) -> None:
        _Gateway.seen = []

    def session(self, dd: Drydock) -> Any:
        from drydock.client import Session
        from drydock.types import SessionInfo

        info = SessionInfo.from_json({"id": "ses_1", "threadId": "t", "status": "ready", "createdAt": "2026-01-01T00:00:00Z"})
        return Session(dd._http, info)

    def test_a_get_is_retried_through_503(self) -> None:
        _Gateway.fail = 2
        with Drydock(url=self.url, api_key="k") as dd:
            self.assertEqual(dd.sessions.list(), [])
        self.assertEqual(len(_Gateway.seen), 3)

    def test_retries_give_up_after_the_policy_s_attempts(self) -> None:
        _Gateway.fail = 5
        with self.assertRaises(DrydockError) as caught:
            with Drydock(url=self.url, api_key="k", retry=RetryPolicy(attempts=2)) as dd:
                dd.sessions.list()
        self.assertEqual((caught.exception.code, caught.exception.status, caught.exception.request_id), ("SERVICE_UNAVAILABLE", 503, "req-test"))
        self.assertEqual(len(_Gateway.seen), 2)
        _Gateway.fail = 0

    def test_a_run_is_not_repeated_without_an_idempotency_key(self) -> None:
        _Gateway.fail = 1
        with self.assertRaises(DrydockError) as caught:
            with Drydock(url=self.url, api_key="k") as dd:
                self.session(dd).run("1")
        self.assertEqual(caught.exception.status, 503)
        self.assertEqual(len(_Gateway.seen), 1)

    def test_a_run_with_an_idempotency_key_is_retried(self) -> None:
        _Gateway.fail = 1
        with Drydock(url=self.url, api_key="k") as dd:
            run = self.session(dd).run("1", idempotency_key="k-1")
        self.assertEqual(run.result.text, "1")  # type: ignore[union-attr]
        self.assertEqual(len(_Gateway.seen), 2)

    def test_the_async_client_retries_the_same_way(self) -> None:
        async def main() -> None:
            async with AsyncDrydock(url=self.url, api_key="k") as dd:
                _Gateway.fail = 1
                self.assertEqual(await dd.sessions.list(), [])
                self.assertEqual(len(_Gateway.seen), 2)
                _Gateway.seen = []
                _Gateway.fail = 1
                with self.assertRaises(DrydockError):
                    await dd.batches.submit(["1"])
                self.assertEqual(len(_Gateway.seen), 1)

        asyncio.run(main())
        _Gateway.fail = 0


__all__ = ["platform"]
