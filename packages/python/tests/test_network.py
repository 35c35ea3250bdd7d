"""A session's network policy and connection log (the tenant's ceiling allows two hosts)."""

from __future__ import annotations

import contextlib
import unittest
from typing import Iterator

from drydock import DrydockError, NetworkPolicy, SessionNetwork
from support import LiveTestCase, thread_id


@contextlib.contextmanager
def networked() -> Iterator[None]:
    """Skips where the platform booted here cannot give a sandbox a network."""
    try:
        yield
    except DrydockError as error:
        if error.code == "NETWORK_UNAVAILABLE":
            raise unittest.SkipTest(f"this platform gives sandboxes no network: {error.message}") from None
        raise


class NetworkTest(LiveTestCase):
    limits = {"network": {"allow": ["example.com", "*.example.org"]}}

    def test_policy_log_and_narrowing(self) -> None:
        with networked(), self.dd.sessions.create(thread_id=thread_id("net"), network={"allow": ["example.com", "api.example.org"]}) as s:
            self.assertIsInstance(s.info.network, NetworkPolicy)
            self.assertEqual(sorted(s.info.network.allow), ["api.example.org", "example.com"])  # type: ignore[union-attr]
            page = s.network()
            self.assertIsInstance(page, SessionNetwork)
            self.assertEqual(sorted(page.policy.allow), ["api.example.org", "example.com"])  # type: ignore[union-attr]
            self.assertIsInstance(page.connections, list)
            self.assertEqual(list(s.connections(verdict="allowed")), [c for c in page.connections if c.verdict == "allowed"])
            narrowed = s.narrow_network(["example.com"])
            self.assertEqual(narrowed.network.allow, ["example.com"])  # type: ignore[union-attr]
            with self.assertRaises(DrydockError) as caught:
                s.narrow_network(["example.com", "elsewhere.net"])
            self.assertEqual((caught.exception.code, caught.exception.status), ("NETWORK_NOT_ALLOWED", 422))

    def test_a_policy_past_the_ceiling_is_network_not_allowed_with_the_entries(self) -> None:
        with self.assertRaises(DrydockError) as caught:
            self.dd.sessions.create(thread_id=thread_id("net"), network={"allow": ["elsewhere.net"]})
        self.assertEqual((caught.exception.code, caught.exception.status), ("NETWORK_NOT_ALLOWED", 422))
        self.assertIn("elsewhere.net", str(caught.exception.details))

    def test_without_a_policy_the_session_has_no_network(self) -> None:
        with self.dd.sessions.create(thread_id=thread_id("net")) as s:
            self.assertIsNone(s.info.network)
            self.assertIsNone(s.network().policy)

    def test_the_async_client_reads_and_narrows_the_policy(self) -> None:
        import asyncio

        async def main() -> None:
            async with self.async_client() as dd:
                async with await dd.sessions.create(thread_id=thread_id("net"), network={"allow": ["example.com", "x.example.org"]}) as s:
                    page = await s.network(limit=10)
                    self.assertEqual(sorted(page.policy.allow), ["example.com", "x.example.org"])  # type: ignore[union-attr]
                    self.assertEqual([c async for c in s.connections()], page.connections)
                    self.assertEqual((await s.narrow_network(["x.example.org"])).network.allow, ["x.example.org"])  # type: ignore[union-attr]

        with networked():
            asyncio.run(main())
