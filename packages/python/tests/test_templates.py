"""Templates: build, follow the log, list, get, delete. A successful build takes about a
minute here (the image is pushed to the registry): it runs with DRYDOCK_PY_SLOW=1 only; a
failing build exercises the same calls in under a second."""

from __future__ import annotations

import os
import secrets
import unittest

from drydock import DrydockError, Template, TemplateBuild, TemplateBuildError, TemplateSummary, TemplateVersion
from support import LiveTestCase, thread_id


class TemplatesTest(LiveTestCase):
    def test_a_failing_build_logs_its_step_and_raises_template_build_failed(self) -> None:
        name = f"py-fail-{secrets.token_hex(3)}"
        build = self.dd.templates.build(name, "FROM drydock\nRUN echo building && exit 7\n", description="fails on purpose")
        self.assertIsInstance(build, TemplateBuild)
        self.assertEqual(build.ref, f"{name}:1")
        lines: list[str] = []
        with self.assertRaises(TemplateBuildError) as caught:
            build.wait(on_log=lines.append)
        self.assertEqual(caught.exception.code, "TEMPLATE_BUILD_FAILED")
        self.assertIn("exit 7", caught.exception.build_error)
        self.assertTrue(any("building" in line for line in lines), lines)
        # The log can be read again from its first line once the build ended.
        self.assertEqual(list(self.dd.templates.build_of(name, 1).logs()), lines)
        template = self.dd.templates.get(name)
        self.assertIsInstance(template, Template)
        self.assertEqual([(v.version, v.status) for v in template.versions], [(1, "failed")])
        listed = {t.name: t for t in self.dd.templates.list()}
        self.assertIsInstance(listed[name], TemplateSummary)
        self.assertEqual(listed[name].latest.status, "failed")  # type: ignore[union-attr]
        self.dd.templates.delete(name)
        with self.assertRaises(DrydockError) as gone:
            self.dd.templates.get(name)
        self.assertEqual(gone.exception.code, "TEMPLATE_NOT_FOUND")

    def test_a_session_of_an_unknown_template_is_template_not_found(self) -> None:
        with self.assertRaises(DrydockError) as caught:
            self.dd.sessions.create(thread_id=thread_id(), template="no-such-template")
        self.assertEqual((caught.exception.code, caught.exception.status), ("TEMPLATE_NOT_FOUND", 404))

    @unittest.skipUnless(os.environ.get("DRYDOCK_PY_SLOW") == "1", "a successful build takes a minute: DRYDOCK_PY_SLOW=1")
    def test_a_built_template_starts_sessions(self) -> None:
        name = f"py-ok-{secrets.token_hex(3)}"
        version = self.dd.templates.build(name, "FROM drydock\nRUN echo baked > /opt/baked.txt\n").wait()
        self.assertIsInstance(version, TemplateVersion)
        self.assertEqual(version.status, "ready")
        try:
            with self.dd.sessions.create(thread_id=thread_id(), template=f"{name}:1") as s:
                self.assertEqual(s.commands.run("cat /opt/baked.txt").stdout, "baked\n")
        finally:
            self.dd.templates.delete(name)
