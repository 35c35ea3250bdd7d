"""AsyncDrydock: the same surface as Drydock, against the real platform."""

from __future__ import annotations

import asyncio
import inspect
import io
import unittest
import urllib.request
from typing import AsyncIterator

import drydock
from drydock import AsyncDrydock, DrydockError
from support import LiveTestCase, thread_id

_PAIRS = [
    "Drydock", "Sessions", "Session", "Executions", "SessionCommands", "ProcessHandle", "ThreadFiles",
    "Artifacts", "Batches", "BatchRun", "Templates", "TemplateBuild", "Download", "Snapshots",
]


class SurfaceTest(unittest.TestCase):
    def test_the_async_classes_have_the_sync_methods_and_arguments(self) -> None:
        for name in _PAIRS:
            sync, aio = getattr(drydock, name), getattr(drydock, "Async" + name)
            with self.subTest(name=name):
                ours = {m for m in dir(sync) if not m.startswith("_")} - {"close"}
                theirs = {m for m in dir(aio) if not m.startswith("_")} - {"close", "aclose"}
                self.assertEqual(ours, theirs)
                for method in ours:
                    f, g = getattr(sync, method), getattr(aio, method)
                    if inspect.isfunction(f):
                        self.assertEqual(list(inspect.signature(f).parameters), list(inspect.signature(g).parameters), method)

    def test_the_package_is_typed(self) -> None:
        import importlib.resources

        self.assertTrue(importlib.resources.files("drydock").joinpath("py.typed").is_file())


class AsyncClientTest(LiveTestCase):
    def test_every_area_through_the_async_client(self) -> None:
        asyncio.run(self._every_area())

    async def _every_area(self) -> None:
        async with AsyncDrydock(url=self.dd.url, api_key=self.key) as dd:
            tid = thread_id("aio")
            s = await dd.sessions.create(thread_id=tid)
            try:
                run = await s.run("x = 6\nx * 7")
                self.assertEqual(run.result.text, "42")  # type: ignore[union-attr]
                self.assertEqual((await dd.sessions.get(s.id)).id, s.id)
                self.assertIn(s.id, [x.id for x in await dd.sessions.list()])
                self.assertEqual((await s.refresh()).thread_id, tid)

                # Streaming: the code goes on only once the client had its first chunk
                # (told through a background process, as in test_sessions).
                relay = await s.commands.run("read line; touch /tmp/aio-seen", background=True)
                chunks: list[str] = []

                async def on_stdout(text: str) -> None:  # an async callback is awaited
                    if not chunks:
                        await relay.send_stdin("seen\n")
                    chunks.append(text)

                streamed = await s.run(
                    "import os, time\nprint('a', flush=True)\nfor _ in range(400):\n    if os.path.exists('/tmp/aio-seen'): break\n    time.sleep(0.05)\n"
                    "print('b' if os.path.exists('/tmp/aio-seen') else 'unseen')",
                    on_stdout=on_stdout,
                )
                self.assertEqual(streamed.stdout, "a\nb\n")
                self.assertEqual("".join(chunks), "a\nb\n")

                # Interrupt from another task.
                started = asyncio.Event()
                long = asyncio.ensure_future(s.run("import time\nprint('go', flush=True)\ntime.sleep(60)", on_stdout=lambda _t: started.set()))
                await asyncio.wait_for(started.wait(), 20)
                stopped = await s.interrupt()
                record = await asyncio.wait_for(long, 20)
                self.assertEqual(stopped, [record.id])
                self.assertEqual((await dd.executions.get(record.id)).id, record.id)
                self.assertFalse((await dd.executions.interrupt(record.id)).requested)

                # Commands and a background process.
                command = await s.commands.run("echo out; exit 2")
                self.assertEqual((command.exit_code, command.stdout), (2, "out\n"))
                out: list[str] = []
                handle = await s.commands.run("cat", background=True, on_stdout=out.append)
                await handle.send_stdin("piped\n", eof=True)
                self.assertEqual((await handle.wait()).exit_code, 0)
                self.assertEqual("".join(out), "piped\n")
                self.assertEqual((await handle.info()).status, "exited")
                self.assertIn(handle.id, [p.id for p in await s.commands.list()])
                sleeper = await s.commands.run(["sleep", "60"], background=True)
                self.assertTrue(await sleeper.kill())
                self.assertEqual((await sleeper.wait()).signal, "SIGKILL")

                # Files.
                files = s.files
                async def chunks() -> AsyncIterator[bytes]:
                    yield b"line 1\n"
                    yield b"line 2\nline 3\n"

                await files.write("/a/lines.txt", chunks())
                self.assertTrue(await files.exists("/a/lines.txt"))
                self.assertEqual(await files.read_text("/a/lines.txt"), "line 1\nline 2\nline 3\n")
                self.assertEqual((await files.read("/a/lines.txt", offset=1, limit=1)).split("\t")[1], "line 2")
                self.assertEqual([e.path for e in await files.ls("/a")], ["/a/lines.txt"])
                self.assertEqual((await files.edit("/a/lines.txt", "line 3", "third")).occurrences, 1)
                self.assertEqual(await files.glob("**/*.txt"), ["/a/lines.txt"])
                self.assertEqual((await files.grep("third", output_mode="content")).matches[0].line, 3)
                async with await files.stream("/a/lines.txt") as download:
                    self.assertEqual(await download.read(), b"line 1\nline 2\nthird\n")
                sink = io.BytesIO()
                await files.download_to("/a/lines.txt", sink)
                self.assertEqual(sink.getvalue(), b"line 1\nline 2\nthird\n")
                await files.delete("/a/lines.txt")
                with self.assertRaises(DrydockError) as caught:
                    await files.download("/a/lines.txt")
                self.assertEqual(caught.exception.code, "FILE_NOT_FOUND")

                # Artifacts.
                made = await s.run("import os\nos.makedirs('/session/artifacts', exist_ok=True)\nopen('/session/artifacts/r.txt', 'w').write('art')")
                art = made.artifacts[0]
                self.assertEqual((await dd.artifacts.get(art.id)).name, "r.txt")
                self.assertIn(art.id, [a.id for a in await dd.artifacts.list(thread_id=tid)])
                self.assertEqual(await dd.artifacts.download(art.id), b"art")
                signed = await dd.artifacts.signed_url(art.id)
                body = await asyncio.to_thread(lambda: urllib.request.urlopen(signed.url, timeout=30).read())
                self.assertEqual(body, b"art")
                await dd.artifacts.delete(art.id)
            finally:
                await s.delete()

            # Batches: an async generator, progress, streamed results.
            async def items() -> AsyncIterator[str]:
                for i in range(150):
                    yield f"{i} + 1"

            sent: list[int] = []
            progress: list[drydock.Batch] = []
            batch = await dd.batches.submit(items(), concurrency=8, on_sent=sent.append, on_progress=progress.append)
            self.assertEqual(sent[-1], 150)
            self.assertGreater(len(sent), 1)
            self.assertEqual(batch.info.counts.ok, 150)
            results = [r async for r in batch.results()]
            self.assertEqual([r.index async for r in batch.results(follow=True)], list(range(150)))
            running = await dd.batches.submit((f"import time\ntime.sleep(0.05)\n{i}" for i in range(8)), concurrency=4)
            followed = [r async for r in running.results(follow=True)]
            self.assertEqual(sorted(r.index for r in followed), list(range(8)))
            self.assertTrue((await running.refresh()).done)
            self.assertEqual([r.result.text for r in results[:3]], ["1", "2", "3"])  # type: ignore[union-attr]
            self.assertEqual(len(await batch.items(limit=7)), 7)
            self.assertEqual((await dd.batches.get(batch.id)).id, batch.id)
            self.assertIn(batch.id, [b.id async for b in dd.batches.all()])

            # Templates: a failing build, followed to its end.
            build = await dd.templates.build(f"aio-{tid}", "FROM drydock\nRUN exit 3\n")
            with self.assertRaises(drydock.TemplateBuildError):
                await build.wait()
            self.assertEqual((await dd.templates.get(build.name)).versions[0].status, "failed")
            self.assertIn(build.name, [t.name for t in await dd.templates.list()])
            await dd.templates.delete(build.name)

    def test_many_runs_at_once_share_the_client(self) -> None:
        async def main() -> list[str]:
            async with AsyncDrydock(url=self.dd.url, api_key=self.key) as dd:
                sessions = await asyncio.gather(*(dd.sessions.create(thread_id=thread_id("many")) for _ in range(3)))
                try:
                    runs = await asyncio.gather(*(s.run(f"{i} * 10") for i, s in enumerate(sessions)))
                    return [r.result.text for r in runs]  # type: ignore[union-attr]
                finally:
                    await asyncio.gather(*(s.delete() for s in sessions))

        self.assertEqual(asyncio.run(main()), ["0", "10", "20"])
