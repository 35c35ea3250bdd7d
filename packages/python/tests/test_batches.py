"""Batches: submitted from an iterable as NDJSON with progress, results streamed."""

from __future__ import annotations

from typing import Iterator

from drydock import Batch, BatchItem, BatchItemEvent, BatchRun, DrydockError
from support import LiveTestCase


class BatchesTest(LiveTestCase):
    limits = {"maxConcurrency": 8}

    def test_500_items_from_a_generator_with_progress_and_streamed_results(self) -> None:
        produced = 0

        def items() -> Iterator[dict[str, object]]:
            nonlocal produced
            for i in range(500):
                produced += 1
                yield {"code": f"{i} * 2", "id": f"item-{i}"}

        sent: list[int] = []
        progress: list[Batch] = []
        ended: list[BatchItemEvent] = []
        run = self.dd.batches.submit(items(), concurrency=8, metadata={"suite": "python"}, on_sent=sent.append, on_progress=progress.append, on_item=ended.append)
        self.assertIsInstance(run, BatchRun)
        self.assertEqual(produced, 500)
        # Submission progress: more than one call, never backwards, ending at every item.
        self.assertGreater(len(sent), 1)
        self.assertEqual(sent, sorted(sent))
        self.assertEqual(sent[-1], 500)
        # Run progress: the counts as they changed, then the final state.
        self.assertTrue(progress)
        self.assertTrue(all(isinstance(b, Batch) for b in progress))
        self.assertEqual(run.info.status, "completed")
        self.assertEqual((run.info.total, run.info.counts.ok), (500, 500))
        self.assertEqual(run.info.metadata, {"suite": "python"})
        self.assertEqual(len(ended), 500)
        results = run.results()
        first = next(results)
        self.assertIsInstance(first, BatchItem)
        rest = list(results)
        self.assertEqual([r.index for r in [first, *rest]], list(range(500)))
        self.assertEqual(rest[-1].result.text, "998")  # type: ignore[union-attr]
        self.assertEqual(rest[-1].id, "item-499")
        page = run.items(offset=10, limit=5)
        self.assertEqual([i.index for i in page], [10, 11, 12, 13, 14])
        self.assertEqual(self.dd.batches.get(run.id).info.counts.ok, 500)
        self.assertIn(run.id, [b.id for b in self.dd.batches.list(limit=10).batches])
        self.assertIn(run.id, [b.id for b in self.dd.batches.all(page_size=1)])

    def test_following_results_yields_each_item_as_it_finishes(self) -> None:
        run = self.dd.batches.submit((f"import time\ntime.sleep(0.05)\n{i}" for i in range(16)), concurrency=4)
        seen: list[int] = []
        first_while_running: bool | None = None
        for item in run.results(follow=True):
            self.assertIsInstance(item, BatchItem)
            self.assertEqual(item.status, "ok")
            self.assertEqual(item.result.text, str(item.index))  # type: ignore[union-attr]
            if first_while_running is None:
                first_while_running = not run.refresh().done
            seen.append(item.index)
        self.assertTrue(first_while_running, "the first result came only once the batch was done")
        self.assertEqual(sorted(seen), list(range(16)))
        self.assertTrue(run.refresh().done)
        # Once done, following gives what the plain stream gives.
        self.assertEqual([i.index for i in run.results(follow=True)], list(range(16)))

    def test_items_with_files_errors_and_strings(self) -> None:
        run = self.dd.batches.submit(["1 / 0", {"code": "open('/session/in.txt').read()", "files": {"/in.txt": "data"}}])
        final = run.wait()
        self.assertEqual(final.counts.error, 1)
        first, second = run.results()
        self.assertEqual(first.error.name, "ZeroDivisionError")  # type: ignore[union-attr]
        self.assertEqual(second.result.text, "'data'")  # type: ignore[union-attr]

    def test_a_bad_item_refuses_the_batch_with_its_index(self) -> None:
        # The gateway answers while the body still streams: that answer is the error.
        def items() -> Iterator[dict[str, object]]:
            for i in range(50_000):
                yield {"code": "1"} if i != 100 else {"code": "1", "nope": True}

        before = [b.id for b in self.dd.batches.list(limit=5).batches]
        with self.assertRaises(DrydockError) as caught:
            self.dd.batches.submit(items())
        e = caught.exception
        self.assertEqual((e.code, e.status), ("INVALID_BATCH_ITEM", 400))
        self.assertEqual((e.details or {}).get("index"), 100)
        self.assertEqual([b.id for b in self.dd.batches.list(limit=5).batches], before)  # nothing recorded

    def test_cancel_stops_the_queued_items(self) -> None:
        run = self.dd.batches.submit(("import time\ntime.sleep(30)" for _ in range(20)), concurrency=1)
        cancelled = run.cancel(kill=True)
        self.assertIsInstance(cancelled, Batch)
        final = run.wait()
        self.assertEqual(final.status, "cancelled")
        self.assertGreaterEqual(final.counts.cancelled, 19)
