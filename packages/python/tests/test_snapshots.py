"""Hibernate, snapshots and forks against the real platform, on the gvisor tier
(scripts/platform.sh sets SANDBOX_GVISOR_RUNTIME=runsc): sync and async."""

from __future__ import annotations

import asyncio

from drydock import DrydockError, Session, SessionInfo, Snapshot
from support import LiveTestCase, thread_id


def _delete_quietly(*sessions: Session) -> None:
    for s in sessions:
        try:
            s.delete()
        except DrydockError:
            pass


class HibernateSnapshotForkTest(LiveTestCase):
    def test_hibernate_resume_snapshot_fork_and_the_snapshots_api(self) -> None:
        tid = thread_id("gv")
        s = self.dd.sessions.create(thread_id=tid, tier="gvisor")
        forked: Session | None = None
        try:
            self.assertEqual(s.info.tier, "gvisor")
            self.assertIsNone(s.info.hibernated_at)
            set_up = s.run("x = 41\npath = ['start']\nopen('/session/plan.md', 'w').write('step 1')")
            self.assertEqual(set_up.status, "ok", set_up.error)
            self.assertIsNone(set_up.resumed_ms)

            # Hibernate: the answer is the session's state, also kept in info.
            info = s.hibernate()
            self.assertIsInstance(info, SessionInfo)
            self.assertIs(info, s.info)
            self.assertEqual(info.status, "hibernated")
            self.assertTrue(info.hibernated)
            self.assertEqual(info.tier, "gvisor")
            self.assertIsInstance(info.hibernated_at, str)
            self.assertEqual(s.refresh().status, "hibernated")
            # Asked again, it is answered as it is.
            self.assertEqual(s.hibernate().status, "hibernated")

            # The next run resumes it with its variables.
            resumed = s.run("x + 1")
            self.assertEqual(resumed.status, "ok", resumed.error)
            self.assertEqual(resumed.result.text, "42")  # type: ignore[union-attr]
            self.assertFalse(resumed.state_lost)
            self.assertIsInstance(resumed.resumed_ms, int)
            self.assertEqual(self.dd.executions.get(resumed.id).resumed_ms, resumed.resumed_ms)
            self.assertEqual(s.refresh().status, "ready")
            self.assertIsNone(s.info.hibernated_at)
            self.assertIsNone(s.run("x").resumed_ms)

            # A snapshot between runs; the session goes on.
            snap = s.snapshot(ttl_seconds=3600)
            self.assertIsInstance(snap, Snapshot)
            self.assertTrue(snap.id.startswith("snp_"), snap.id)
            self.assertEqual(snap.session_id, s.id)
            self.assertEqual(snap.tier, "gvisor")
            self.assertIsInstance(snap.size_bytes, int)
            self.assertGreater(snap.size_bytes, 0)
            self.assertIsInstance(snap.created_at, str)
            self.assertIsInstance(snap.expires_at, str)
            after = s.run("path.append('original'); path")
            self.assertEqual(after.result.text, "['start', 'original']")  # type: ignore[union-attr]
            self.assertFalse(after.state_lost)

            # A fork on the original's thread (which has a live session) is refused.
            with self.assertRaises(DrydockError) as refused:
                self.dd.sessions.fork(snap.id, thread_id=tid)
            self.assertEqual((refused.exception.code, refused.exception.status), ("THREAD_HAS_SESSION", 409))
            # Other settings beside the snapshot and the thread are refused.
            with self.assertRaises(DrydockError) as invalid:
                self.dd.sessions.create(from_snapshot=snap.id, tier="gvisor")
            self.assertEqual((invalid.exception.code, invalid.exception.status), ("INVALID_FORK", 400))

            # A fork into a thread of its own: the snapshot's variables and files, then
            # its own way, neither seeing the other's changes.
            branch = thread_id("branch")
            forked = self.dd.sessions.fork(snap.id, thread_id=branch)
            self.assertNotEqual(forked.id, s.id)
            self.assertEqual(forked.thread_id, branch)
            self.assertEqual(forked.info.tier, "gvisor")
            seen = forked.run("x, path")
            self.assertEqual(seen.status, "ok", seen.error)
            self.assertEqual(seen.result.text, "(41, ['start'])")  # type: ignore[union-attr]
            self.assertFalse(seen.state_lost)
            forked.run("x = 100\npath.append('fork')\nopen('/session/plan.md', 'a').write(', fork')")
            self.assertEqual(forked.run("x, path").result.text, "(100, ['start', 'fork'])")  # type: ignore[union-attr]
            self.assertEqual(s.run("x, path").result.text, "(41, ['start', 'original'])")  # type: ignore[union-attr]
            self.assertEqual(forked.files.read_text("/plan.md"), "step 1, fork")
            self.assertEqual(s.files.read_text("/plan.md"), "step 1")

            # The snapshots API.
            listed = self.dd.snapshots.list()
            self.assertIn(snap.id, [x.id for x in listed])
            self.assertTrue(all(isinstance(x, Snapshot) for x in listed))
            got = self.dd.snapshots.get(snap.id)
            self.assertEqual((got.id, got.session_id, got.size_bytes), (snap.id, s.id, snap.size_bytes))
            self.assertIsNone(self.dd.snapshots.delete(snap.id))  # type: ignore[func-returns-value]
            with self.assertRaises(DrydockError) as gone:
                self.dd.snapshots.get(snap.id)
            self.assertEqual((gone.exception.code, gone.exception.status), ("SNAPSHOT_NOT_FOUND", 404))
            self.assertNotIn(snap.id, [x.id for x in self.dd.snapshots.list()])
            with self.assertRaises(DrydockError) as no_fork:
                self.dd.sessions.fork(snap.id)
            self.assertEqual((no_fork.exception.code, no_fork.exception.status), ("SNAPSHOT_NOT_FOUND", 404))
            with self.assertRaises(DrydockError) as no_delete:
                self.dd.snapshots.delete(snap.id)
            self.assertEqual(no_delete.exception.code, "SNAPSHOT_NOT_FOUND")
            # The fork goes on without its snapshot.
            self.assertEqual(forked.run("x").result.text, "100")  # type: ignore[union-attr]
        finally:
            _delete_quietly(*(x for x in (forked, s) if x is not None))

    def test_a_runc_session_cannot_hibernate_or_be_snapshotted_and_runs_on(self) -> None:
        with self.dd.sessions.create(thread_id=thread_id("runc")) as s:
            self.assertEqual(s.info.tier, "runc")
            s.run("y = 1")
            with self.assertRaises(DrydockError) as hibernate:
                s.hibernate()
            self.assertEqual((hibernate.exception.code, hibernate.exception.status), ("CHECKPOINT_NOT_AVAILABLE", 422))
            with self.assertRaises(DrydockError) as snapshot:
                s.snapshot()
            self.assertEqual((snapshot.exception.code, snapshot.exception.status), ("CHECKPOINT_NOT_AVAILABLE", 422))
            run = s.run("y")
            self.assertEqual(run.result.text, "1")  # type: ignore[union-attr]
            self.assertFalse(run.state_lost)
            self.assertEqual(s.refresh().status, "ready")


class TierLimitsTest(LiveTestCase):
    limits = {"tiers": ["gvisor"]}

    def test_a_tier_outside_the_tenants_is_refused(self) -> None:
        with self.assertRaises(DrydockError) as refused:
            self.dd.sessions.create(tier="runc")
        self.assertEqual((refused.exception.code, refused.exception.status), ("TIER_NOT_ALLOWED", 422))


class AsyncHibernateSnapshotForkTest(LiveTestCase):
    def test_the_same_flow_through_the_async_client(self) -> None:
        asyncio.run(self._flow())

    async def _flow(self) -> None:
        async with self.async_client() as dd:
            s = await dd.sessions.create(thread_id=thread_id("aio-gv"), tier="gvisor")
            try:
                self.assertEqual(s.info.tier, "gvisor")
                await s.run("x = 41")
                info = await s.hibernate()
                self.assertEqual(info.status, "hibernated")
                self.assertIsInstance(info.hibernated_at, str)
                resumed = await s.run("x + 1")
                self.assertEqual(resumed.result.text, "42")  # type: ignore[union-attr]
                self.assertFalse(resumed.state_lost)
                self.assertIsInstance(resumed.resumed_ms, int)

                snap = await s.snapshot()
                self.assertIsInstance(snap, Snapshot)
                self.assertEqual(snap.session_id, s.id)
                forked = await dd.sessions.fork(snap.id)
                try:
                    self.assertNotEqual(forked.thread_id, s.thread_id)
                    await forked.run("x = 7")
                    self.assertEqual((await forked.run("x")).result.text, "7")  # type: ignore[union-attr]
                    self.assertEqual((await s.run("x")).result.text, "41")  # type: ignore[union-attr]
                finally:
                    await forked.delete()

                self.assertIn(snap.id, [x.id for x in await dd.snapshots.list()])
                self.assertEqual((await dd.snapshots.get(snap.id)).id, snap.id)
                await dd.snapshots.delete(snap.id)
                with self.assertRaises(DrydockError) as gone:
                    await dd.snapshots.get(snap.id)
                self.assertEqual((gone.exception.code, gone.exception.status), ("SNAPSHOT_NOT_FOUND", 404))
            finally:
                await s.delete()
