"""drydock.deepagents.DrydockBackend as a contract: the method names, arguments and result
shapes of DeepAgents' sandbox backend protocol (the design note, seed 004), on a real
thread's files and session."""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import subprocess
import sys
import typing
import unittest

from drydock.deepagents import (
    DrydockBackend,
    EditResult,
    ExecuteResponse,
    FileDownloadResponse,
    FileInfo,
    FileUploadResponse,
    GrepMatch,
    WriteResult,
)
from support import LiveTestCase, thread_id

# The protocol as the note gives it: method -> its parameters after self.
PROTOCOL = {
    "ls_info": ["path"],
    "read": ["file_path", "offset", "limit"],
    "write": ["file_path", "content"],
    "edit": ["file_path", "old_string", "new_string", "replace_all"],
    "grep_raw": ["pattern", "path", "glob"],
    "glob_info": ["pattern", "path"],
    "execute": ["command"],
    "upload_files": ["files"],
    "download_files": ["paths"],
}


def assert_file_info(case: unittest.TestCase, info: object) -> None:
    case.assertIsInstance(info, dict)
    assert isinstance(info, dict)
    case.assertIsInstance(info["path"], str)
    case.assertLessEqual(set(info), {"path", "is_dir", "size", "modified_at"})
    if "is_dir" in info:
        case.assertIsInstance(info["is_dir"], bool)
    if "size" in info:
        case.assertIsInstance(info["size"], int)


class ShapesTest(unittest.TestCase):
    def test_methods_and_arguments_are_the_protocol_s(self) -> None:
        for name, params in PROTOCOL.items():
            with self.subTest(method=name):
                sig = inspect.signature(getattr(DrydockBackend, name))
                self.assertEqual([p for p in sig.parameters if p != "self"][: len(params)], params)
                # Every further parameter is optional: the protocol's calls stay valid.
                extra = [p for p in list(sig.parameters.values())[1 + len(params) :]]
                self.assertTrue(all(p.default is not inspect.Parameter.empty for p in extra), extra)
                asig = inspect.signature(getattr(DrydockBackend, "a" + name))
                self.assertEqual([p for p in asig.parameters if p != "self"][: len(params)], params)
                self.assertTrue(inspect.iscoroutinefunction(getattr(DrydockBackend, "a" + name)))
        self.assertIsInstance(inspect.getattr_static(DrydockBackend, "id"), property)
        self.assertEqual(inspect.signature(DrydockBackend.read).parameters["offset"].default, 0)
        self.assertEqual(inspect.signature(DrydockBackend.edit).parameters["replace_all"].default, False)
        self.assertEqual(inspect.signature(DrydockBackend.glob_info).parameters["path"].default, "/")

    def test_result_types_have_the_protocol_s_fields(self) -> None:
        fields = lambda cls: [f.name for f in dataclasses.fields(cls)]  # noqa: E731
        self.assertEqual(fields(WriteResult), ["error", "path", "files_update"])
        self.assertEqual(fields(EditResult), ["error", "path", "files_update", "occurrences"])
        self.assertEqual(fields(ExecuteResponse), ["output", "exit_code", "truncated"])
        self.assertEqual(fields(FileUploadResponse), ["path", "error"])
        self.assertEqual(fields(FileDownloadResponse), ["path", "content", "error"])
        self.assertEqual(typing.get_type_hints(GrepMatch), {"path": str, "line": int, "text": str})
        self.assertEqual(FileInfo.__required_keys__, frozenset({"path"}))
        self.assertEqual(FileInfo.__optional_keys__, frozenset({"is_dir", "size", "modified_at"}))

    def test_the_module_does_not_import_deepagents(self) -> None:
        code = (
            "import sys\n"
            "class Block:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name.split('.')[0] in ('deepagents', 'langchain', 'langgraph', 'langchain_core'):\n"
            "            raise ImportError('blocked ' + name)\n"
            "sys.meta_path.insert(0, Block())\n"
            "import drydock.deepagents\n"
            "print('ok')\n"
        )
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=None, timeout=60)
        self.assertEqual(out.stdout.strip(), "ok", out.stderr)

    def test_it_needs_a_session_or_a_client_and_a_thread(self) -> None:
        with self.assertRaises(ValueError):
            DrydockBackend()


class BackendContractTest(LiveTestCase):
    def setUp(self) -> None:
        self.backend = DrydockBackend(client=self.dd, thread_id=thread_id("da"), execute_timeout=20)

    def tearDown(self) -> None:
        session = self.backend._session
        if session is not None:
            session.delete()

    def test_write_creates_and_refuses_an_existing_file(self) -> None:
        result = self.backend.write("/notes/a.txt", "one\ntwo\n")
        self.assertIsInstance(result, WriteResult)
        self.assertEqual((result.error, result.path, result.files_update), (None, "/notes/a.txt", None))
        again = self.backend.write("/notes/a.txt", "other")
        self.assertIsInstance(again.error, str)
        self.assertIn("already exists", again.error or "")
        self.assertIsNone(again.path)
        self.assertEqual(self.backend.files.download("/notes/a.txt"), b"one\ntwo\n")

    def test_read_pages_with_line_numbers(self) -> None:
        self.backend.write("/r.py", "".join(f"line {i}\n" for i in range(1, 101)))
        whole = self.backend.read("/r.py")
        rows = whole.splitlines()
        self.assertEqual(len(rows), 100)
        self.assertEqual(rows[0], "     1\tline 1")
        self.assertEqual(rows[99], "   100\tline 100")
        page = self.backend.read("/r.py", offset=10, limit=5).splitlines()
        self.assertEqual([r.split("\t") for r in page], [[f"{n:>6}", f"line {n}"] for n in range(11, 16)])
        self.assertEqual(self.backend.read("/r.py", 98, 10).splitlines()[-1], "   100\tline 100")
        self.assertIn("past its end", self.backend.read("/r.py", offset=500))
        self.assertEqual(self.backend.read("/r.py", limit=0), "")
        self.assertEqual(self.backend.read("/missing.txt"), "Error: File '/missing.txt' not found")
        self.backend.write("/empty.txt", "")
        self.assertIn("empty", self.backend.read("/empty.txt"))

    def test_edit_replaces_unique_or_all_and_explains_failures(self) -> None:
        self.backend.write("/e.txt", "a b a\n")
        ambiguous = self.backend.edit("/e.txt", "a", "z")
        self.assertIsInstance(ambiguous, EditResult)
        self.assertIsInstance(ambiguous.error, str)
        self.assertIsNone(ambiguous.occurrences)
        every = self.backend.edit("/e.txt", "a", "z", replace_all=True)
        self.assertEqual((every.error, every.path, every.occurrences, every.files_update), (None, "/e.txt", 2, None))
        one = self.backend.edit("/e.txt", "b", "y")
        self.assertEqual(one.occurrences, 1)
        self.assertIn("not found", self.backend.edit("/e.txt", "absent", "q").error or "")
        self.assertIn("not found", self.backend.edit("/nope.txt", "a", "b").error or "")
        self.assertEqual(self.backend.files.download("/e.txt"), b"z y z\n")

    def test_ls_info_and_glob_info_return_file_infos(self) -> None:
        self.backend.write("/p/one.py", "1")
        self.backend.write("/p/sub/two.py", "2")
        listed = self.backend.ls_info("/p")
        for info in listed:
            assert_file_info(self, info)
        self.assertEqual(sorted((i["path"], i.get("is_dir")) for i in listed), [("/p/one.py", False), ("/p/sub/", True)])
        self.assertEqual(next(i for i in listed if i["path"] == "/p/one.py").get("size"), 1)
        self.assertEqual(self.backend.ls_info("/no-such-dir"), [])
        found = self.backend.glob_info("**/*.py", "/p")
        for info in found:
            assert_file_info(self, info)
        self.assertEqual(sorted(i["path"] for i in found), ["/p/one.py", "/p/sub/two.py"])
        self.assertEqual([i["path"] for i in self.backend.glob_info("*.py", "/p/sub")], ["/p/sub/two.py"])

    def test_grep_raw_and_the_three_output_modes(self) -> None:
        self.backend.write("/g/a.py", "import os\nprint(os.name)\nprint(1)\n")
        self.backend.write("/g/b.md", "print me\n")
        matches = self.backend.grep_raw("print", "/g")
        self.assertIsInstance(matches, list)
        assert isinstance(matches, list)
        for m in matches:
            self.assertEqual(set(m), {"path", "line", "text"})
        self.assertEqual([(m["path"], m["line"], m["text"]) for m in matches], [("/g/a.py", 2, "print(os.name)"), ("/g/a.py", 3, "print(1)"), ("/g/b.md", 1, "print me")])
        self.assertEqual([m["path"] for m in self.backend.grep_raw("print", "/g", "*.md")], ["/g/b.md"])  # type: ignore[index]
        # Regular expressions, as the note's grep says; an invalid one is an error string.
        self.assertEqual([m["line"] for m in self.backend.grep_raw(r"print\(\d\)", "/g")], [3])  # type: ignore[index]
        self.assertIsInstance(self.backend.grep_raw("print(", "/g"), str)
        literal = DrydockBackend(client=self.dd, thread_id=self.backend.thread_id, grep_regex=False)
        self.assertEqual([m["line"] for m in literal.grep_raw("print(", "/g")], [2, 3])  # type: ignore[index]
        self.assertEqual(self.backend.grep_raw("absent", "/g"), [])
        # The grep tool's text in each output mode.
        self.assertEqual(self.backend.grep_text("print", "/g").splitlines(), ["/g/a.py", "/g/b.md"])
        self.assertEqual(self.backend.grep_text("print", "/g", output_mode="content").splitlines(), ["/g/a.py:2:print(os.name)", "/g/a.py:3:print(1)", "/g/b.md:1:print me"])
        self.assertEqual(self.backend.grep_text("print", "/g", output_mode="count").splitlines(), ["/g/a.py: 2", "/g/b.md: 1"])
        self.assertIn("No matches", self.backend.grep_text("absent", "/g"))

    def test_execute_returns_output_and_exit_codes(self) -> None:
        ok = self.backend.execute("echo out; echo err >&2")
        self.assertIsInstance(ok, ExecuteResponse)
        self.assertEqual((ok.output, ok.exit_code, ok.truncated), ("out\nerr\n", 0, False))
        self.assertEqual(self.backend.execute("exit 3").exit_code, 3)
        self.assertEqual(self.backend.execute("false").exit_code, 1)
        self.assertEqual(self.backend.execute("no-such-command-xyz").exit_code, 127)
        killed = self.backend.execute("kill -KILL $$")
        self.assertEqual(killed.exit_code, 137)
        slow = self.backend.execute("echo started; sleep 10", timeout=0.7)
        self.assertEqual(slow.exit_code, 124)
        self.assertTrue(slow.output.startswith("started\n"))
        self.assertIn("timed out", slow.output)
        # The files and the shell are the same: a file written by one is read by the other.
        self.backend.write("/from-tool.txt", "tool\n")
        self.assertEqual(self.backend.execute("cat /session/from-tool.txt; echo shell > /session/from-shell.txt").output, "tool\n")
        self.assertEqual(self.backend.read("/from-shell.txt"), "     1\tshell")
        self.assertTrue(self.backend.id.startswith("ses_"))

    def test_execute_replaces_a_session_that_ended(self) -> None:
        first = self.backend.id
        self.backend.session.delete()
        self.assertEqual(self.backend.execute("echo again").output, "again\n")
        self.assertNotEqual(self.backend.id, first)

    def test_a_backend_on_a_session_uses_it(self) -> None:
        session = self.dd.sessions.create(thread_id=thread_id("da-s"))
        try:
            backend = DrydockBackend(session)
            self.assertEqual(backend.id, session.id)
            self.assertEqual(backend.thread_id, session.thread_id)
            session.run("open('/session/made.txt', 'w').write('by python')")
            self.assertEqual(backend.read("/made.txt"), "     1\tby python")
        finally:
            session.delete()

    def test_upload_and_download_files(self) -> None:
        up = self.backend.upload_files([("/bin/a.bin", b"\x00\xff"), ("/bin/b.txt", b"text")])
        self.assertEqual([(u.path, u.error) for u in up], [("/bin/a.bin", None), ("/bin/b.txt", None)])
        down = self.backend.download_files(["/bin/a.bin", "/bin/missing", "/bin"])
        self.assertEqual([(d.path, d.content, d.error) for d in down], [("/bin/a.bin", b"\x00\xff", None), ("/bin/missing", None, "file_not_found"), ("/bin", None, "is_directory")])

    def test_the_async_variants_answer_the_same(self) -> None:
        async def main() -> None:
            self.assertEqual((await self.backend.awrite("/as.txt", "x\ny\n")).path, "/as.txt")
            self.assertEqual(await self.backend.aread("/as.txt", 1, 1), "     2\ty")
            self.assertEqual((await self.backend.aedit("/as.txt", "y", "z")).occurrences, 1)
            self.assertEqual([i["path"] for i in await self.backend.als_info("/")], ["/as.txt"])
            self.assertEqual([i["path"] for i in await self.backend.aglob_info("*.txt")], ["/as.txt"])
            self.assertEqual(await self.backend.agrep_raw("z"), [{"path": "/as.txt", "line": 2, "text": "z"}])
            self.assertEqual((await self.backend.aexecute("exit 5")).exit_code, 5)
            self.assertEqual((await self.backend.aupload_files([("/u", b"u")]))[0].error, None)
            self.assertEqual((await self.backend.adownload_files(["/u"]))[0].content, b"u")

        asyncio.run(main())
