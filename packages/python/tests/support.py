"""What the live tests share: the platform named by the environment and a fresh tenant
per test class.

scripts/test.sh starts the platform (tests/harness.py) and sets ``DRYDOCK_TEST_URL`` and
``DRYDOCK_ADMIN_KEY``; run by hand, a test module starts one itself (slower: once per
process, shared by every module).
"""

from __future__ import annotations

import atexit
import os
import secrets
import unittest
from typing import Any

import harness
from drydock import AsyncDrydock, Drydock

_platform: harness.Platform | None = None


def platform() -> harness.Platform:
    global _platform
    if _platform is None:
        _platform = harness.start()
        if _platform.process is not None:
            atexit.register(_platform.stop)
    return _platform


def new_client(limits: dict[str, Any] | None = None, **options: Any) -> tuple[Drydock, str]:
    """A client of a new tenant (rate limit out of the way), and its key."""
    p = platform()
    _, key = harness.new_tenant(p.url, p.admin_key, {"requestsPerMinute": 1_000_000, **(limits or {})})
    return Drydock(url=p.url, api_key=key, **options), key


def thread_id(prefix: str = "t") -> str:
    return f"{prefix}-{secrets.token_hex(4)}"


class LiveTestCase(unittest.TestCase):
    """A tenant of its own (``cls.dd``, ``cls.key``) for the class's tests."""

    limits: dict[str, Any] | None = None
    dd: Drydock
    key: str

    @classmethod
    def setUpClass(cls) -> None:
        cls.dd, cls.key = new_client(cls.limits)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.dd.close()

    def async_client(self) -> AsyncDrydock:
        return AsyncDrydock(url=self.dd.url, api_key=self.key)
