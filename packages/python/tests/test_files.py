"""A thread's files and artifacts against the real platform."""

from __future__ import annotations

import io
import os
import tarfile
import tempfile
import urllib.request

from drydock import Artifact, ArchiveUpload, DrydockError, EditResult, FileEntry, FileInfo, GrepResult, SignedUrl
from support import LiveTestCase, thread_id


class FilesTest(LiveTestCase):
    def setUp(self) -> None:
        self.files = self.dd.files(thread_id("files"))

    def test_write_stat_download_and_delete(self) -> None:
        info = self.files.write("/data/a.txt", "héllo\n")
        self.assertIsInstance(info, FileInfo)
        self.assertEqual((info.path, info.type, info.size), ("/data/a.txt", "file", len("héllo\n".encode())))
        self.assertTrue(self.files.exists("/data/a.txt"))
        self.assertFalse(self.files.exists("/data/b.txt"))
        self.assertEqual(self.files.download("/data/a.txt"), "héllo\n".encode())
        self.assertEqual(self.files.read_text("/data/a.txt"), "héllo\n")
        stat = self.files.stat("/data/a.txt")
        self.assertIsInstance(stat, FileInfo)
        directory = self.files.stat("/data")
        self.assertIsInstance(directory, FileEntry)
        self.files.delete("/data/a.txt")
        self.assertFalse(self.files.exists("/data/a.txt"))

    def test_ls_lists_direct_children(self) -> None:
        self.files.write("/d/one.txt", "1")
        self.files.write("/d/sub/two.txt", "2")
        entries = self.files.ls("/d")
        self.assertTrue(all(isinstance(e, FileEntry) for e in entries))
        self.assertEqual(sorted((e.path, e.type) for e in entries), [("/d/one.txt", "file"), ("/d/sub", "directory")])

    def test_binary_streams_and_local_files(self) -> None:
        payload = os.urandom(300_000)
        self.files.write("/bin/blob", payload)
        with self.files.stream("/bin/blob") as download:
            self.assertEqual(download.size, len(payload))
            self.assertEqual(b"".join(download), payload)
        with tempfile.TemporaryDirectory() as tmp:
            local = os.path.join(tmp, "in.bin")
            with open(local, "wb") as out:
                out.write(payload)
            self.files.upload("/bin/up.bin", local)
            self.files.write("/bin/chunks.bin", iter([payload[:1000], payload[1000:]]))
            dest = os.path.join(tmp, "out.bin")
            self.assertEqual(self.files.download_to("/bin/up.bin", dest), len(payload))
            with open(dest, "rb") as back:
                self.assertEqual(back.read(), payload)
            sink = io.BytesIO()
            self.files.download_to("/bin/chunks.bin", sink)
            self.assertEqual(sink.getvalue(), payload)

    def test_a_download_closed_early_leaves_the_client_working(self) -> None:
        self.files.write("/big.bin", os.urandom(1_000_000))
        download = self.files.stream("/big.bin")
        first = next(iter(download))
        self.assertTrue(first)
        download.close()
        self.assertEqual(len(self.files.download("/big.bin")), 1_000_000)
        with tempfile.TemporaryDirectory() as tmp:
            with self.files.stream("/big.bin") as rest:
                self.assertEqual(rest.save(os.path.join(tmp, "big.bin")), 1_000_000)
            self.assertEqual(os.path.getsize(os.path.join(tmp, "big.bin")), 1_000_000)

    def test_upload_archive_writes_every_file(self) -> None:
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
            for name, text in [("a.txt", b"A"), ("b/c.txt", b"C")]:
                member = tarfile.TarInfo(name)
                member.size = len(text)
                tar.addfile(member, io.BytesIO(text))
        result = self.files.upload_archive(buffer.getvalue(), path="/arc", gzip=True)
        self.assertIsInstance(result, ArchiveUpload)
        self.assertEqual(result.written, 2)
        self.assertEqual(self.files.download("/arc/b/c.txt"), b"C")

    def test_read_pages_with_line_numbers(self) -> None:
        self.files.write("/lines.txt", "".join(f"line {i}\n" for i in range(1, 21)))
        page = self.files.read("/lines.txt", offset=5, limit=3)
        rows = page.splitlines()
        self.assertEqual(len(rows), 3)
        self.assertEqual(rows[0].split("\t"), ["     6", "line 6"])
        self.assertTrue(rows[2].endswith("line 8"))

    def test_edit_glob_and_grep(self) -> None:
        self.files.write("/src/a.py", "import os\nprint('x')\nprint('x')\n")
        self.files.write("/src/b.py", "value = 1\n")
        self.files.write("/src/notes.md", "print here\n")
        edited = self.files.edit("/src/b.py", "value = 1", "value = 2")
        self.assertIsInstance(edited, EditResult)
        self.assertEqual(edited.occurrences, 1)
        self.assertEqual(self.files.edit("/src/a.py", "'x'", "'y'", replace_all=True).occurrences, 2)
        with self.assertRaises(DrydockError) as caught:
            self.files.edit("/src/b.py", "absent", "z")
        self.assertEqual(caught.exception.code, "STRING_NOT_FOUND")
        self.assertEqual(sorted(self.files.glob("**/*.py")), ["/src/a.py", "/src/b.py"])
        self.assertEqual(self.files.glob("*.md", "/src"), ["/src/notes.md"])
        found = self.files.grep("print", path="/src", glob="*.py", output_mode="content")
        self.assertIsInstance(found, GrepResult)
        self.assertEqual([(m.path, m.line, m.text) for m in found.matches], [("/src/a.py", 2, "print('y')"), ("/src/a.py", 3, "print('y')")])
        self.assertEqual(sorted(self.files.grep("print", path="/src").files), ["/src/a.py", "/src/notes.md"])
        counts = self.files.grep("print", path="/src", output_mode="count")
        self.assertEqual(sorted((c.path, c.count) for c in counts.counts), [("/src/a.py", 2), ("/src/notes.md", 1)])
        self.assertEqual(self.files.grep(r"value = \d", regex=True).files, ["/src/b.py"])
        self.assertEqual(self.files.grep("IMPORT", case_insensitive=True).files, ["/src/a.py"])

    def test_code_and_files_see_the_same_files(self) -> None:
        with self.dd.sessions.create(thread_id=self.files.thread_id) as s:
            s.files.write("/in.csv", "a,b\n1,2\n")
            run = s.run("open('/session/in.csv').read().count('\\n')")
            self.assertEqual(run.result.text, "2")  # type: ignore[union-attr]
            run = s.run("open('/session/out.txt', 'w').write('from code')")
            self.assertIn("/out.txt", run.files.changed)
            self.assertEqual(self.files.download("/out.txt"), b"from code")


class ArtifactsTest(LiveTestCase):
    def test_a_run_s_artifacts_download_and_sign(self) -> None:
        tid = thread_id("art")
        with self.dd.sessions.create(thread_id=tid) as s:
            run = s.run("import os\nos.makedirs('/session/artifacts', exist_ok=True)\nopen('/session/artifacts/report.csv', 'w').write('x,y\\n1,2\\n')")
        self.assertEqual(len(run.artifacts), 1, run)
        art = run.artifacts[0]
        self.assertIsInstance(art, Artifact)
        self.assertEqual((art.name, art.size, art.thread_id), ("report.csv", 8, tid))
        self.assertEqual(self.dd.artifacts.get(art.id).sha256, art.sha256)
        self.assertIn(art.id, [a.id for a in self.dd.artifacts.list(thread_id=tid)])
        self.assertEqual(self.dd.artifacts.download(art.id), b"x,y\n1,2\n")
        with self.dd.artifacts.stream(art.id) as download:
            self.assertEqual(download.read(), b"x,y\n1,2\n")
        sink = io.BytesIO()
        self.assertEqual(self.dd.artifacts.download_to(art.id, sink), 8)
        signed = self.dd.artifacts.signed_url(art.id, ttl_seconds=60)
        self.assertIsInstance(signed, SignedUrl)
        self.assertTrue(signed.url.startswith("http"))
        with urllib.request.urlopen(signed.url, timeout=30) as answer:  # no key
            self.assertEqual(answer.read(), b"x,y\n1,2\n")
        self.dd.artifacts.delete(art.id)
        with self.assertRaises(DrydockError) as caught:
            self.dd.artifacts.get(art.id)
        self.assertEqual(caught.exception.status, 404)
