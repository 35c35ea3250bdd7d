"""The platform the live tests (and bench/python-client) run against.

``DRYDOCK_TEST_URL`` (with ``DRYDOCK_ADMIN_KEY``) names a running gateway; otherwise
``start()`` spawns the launcher (``DRYDOCK_PLATFORM_CMD``, default
``node var/python-sdk/build/packages/python/tests/platform.js`` in the checkout, compiled by
scripts/test.sh: a gateway and a worker in one Node process, with scripts/platform.sh's
settings where the environment has none), which stays up until its stdin closes.

    python3 tests/harness.py run -- <command ...>

starts the platform, creates a tenant, runs the command with ``DRYDOCK_URL``,
``DRYDOCK_API_KEY``, ``DRYDOCK_ADMIN_KEY`` and ``DRYDOCK_TEST_URL`` set, stops the
platform and exits with the command's status. Standard library only.
"""

from __future__ import annotations

import json
import os
import secrets
import shlex
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
DEFAULT_LAUNCHER = ROOT / "var" / "python-sdk" / "build" / "packages" / "python" / "tests" / "platform.js"
START_TIMEOUT_S = 180


@dataclass
class Platform:
    url: str
    admin_key: str
    process: subprocess.Popen[bytes] | None = None

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is None:
            return
        try:
            if process.stdin:
                process.stdin.close()
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.terminate()
            process.wait(timeout=10)


def launcher_env() -> dict[str, str]:
    """The launcher's environment: this one, with scripts/platform.sh's defaults for what
    it lacks (so that a module run by hand boots the same platform as the test script)."""
    env = dict(os.environ)
    var = ROOT / "var"
    defaults = {
        "NODE_ENV": "test",
        "DATABASE_URL": os.environ.get("DRYDOCK_PY_DATABASE_URL", "postgres://drydock:drydock@127.0.0.1:5432/drydock_test_py"),
        "REDIS_URL": os.environ.get("DRYDOCK_PY_REDIS_URL", "redis://127.0.0.1:6379/13"),
        "DRYDOCK_ADMIN_KEY": "test-admin-key-0123456789abcdef",
        "SANDBOX_IMAGE": "drydock/sandbox:latest",
        "TEMPLATE_REGISTRY": "127.0.0.1:5000",
        "ARTIFACTS_SIGNING_SECRET": "test-signing-secret-0123456789abcdef0123",
        "ARTIFACTS_DIR": str(var / "py-artifacts"),
        "SANDBOX_CHANNEL_DIR": str(var / "py-channels"),
        "SANDBOX_GVISOR_RUNTIME": "runsc",
    }
    for key, value in defaults.items():
        if not env.get(key):
            env[key] = value
    for folder in ("ARTIFACTS_DIR", "SANDBOX_CHANNEL_DIR"):
        Path(env[folder]).mkdir(parents=True, exist_ok=True)
    return env


def start() -> Platform:
    """The platform of ``DRYDOCK_TEST_URL``, or one started by the launcher."""
    url = os.environ.get("DRYDOCK_TEST_URL")
    if url:
        key = os.environ.get("DRYDOCK_ADMIN_KEY")
        if not key:
            raise SystemExit("DRYDOCK_TEST_URL is set but DRYDOCK_ADMIN_KEY is not")
        return Platform(url.rstrip("/"), key)
    command = shlex.split(os.environ.get("DRYDOCK_PLATFORM_CMD", "")) or ["node", str(DEFAULT_LAUNCHER)]
    if command[0] == "node" and not Path(command[-1]).exists():
        raise SystemExit(f"the launcher {command[-1]} is missing: run packages/python/scripts/test.sh (it compiles it)")
    log = open(ROOT / "var" / "python-sdk" / "platform.log", "ab") if (ROOT / "var").exists() else subprocess.DEVNULL
    process = subprocess.Popen(command, cwd=ROOT, env=launcher_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log)
    found: dict[str, Any] = {}

    def read() -> None:
        assert process.stdout is not None
        for raw in process.stdout:
            line = raw.decode("utf-8", "replace")
            if line.startswith("DRYDOCK_PLATFORM ") and not found:
                found.update(json.loads(line[len("DRYDOCK_PLATFORM ") :]))
            elif log is not subprocess.DEVNULL:
                log.write(raw)  # type: ignore[union-attr]

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    deadline = time.monotonic() + START_TIMEOUT_S
    while not found:
        if process.poll() is not None:
            raise SystemExit(f"the platform exited ({process.returncode}) before it listened; see var/python-sdk/platform.log")
        if time.monotonic() > deadline:
            process.kill()
            raise SystemExit("the platform did not start within 3 minutes")
        time.sleep(0.05)
    return Platform(found["url"], found["adminKey"], process)


def admin(platform_url: str, admin_key: str, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    """An operator call (the SDK has no admin surface): status and JSON answer."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(platform_url + path, data=data, method=method)
    request.add_header("Authorization", f"Bearer {admin_key}")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            raw = answer.read()
            return answer.status, json.loads(raw) if raw else None
    except urllib.error.HTTPError as error:
        raw = error.read()
        return error.code, json.loads(raw) if raw else None


def new_tenant(platform_url: str, admin_key: str, limits: dict[str, Any] | None = None, prefix: str = "py") -> tuple[str, str]:
    """A new tenant: its id and API key."""
    status, body = admin(platform_url, admin_key, "POST", "/admin/tenants", {"name": f"{prefix}-{secrets.token_hex(3)}", "limits": limits or {}})
    if status != 201:
        raise RuntimeError(f"POST /admin/tenants answered {status}: {body}")
    return body["id"], body["apiKey"]


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[0] != "run" or argv[1] != "--":
        print(__doc__, file=sys.stderr)
        return 2
    platform = start()
    try:
        _, key = new_tenant(platform.url, platform.admin_key, {"requestsPerMinute": 1_000_000}, prefix="py-harness")
        env = dict(os.environ, DRYDOCK_URL=platform.url, DRYDOCK_API_KEY=key, DRYDOCK_ADMIN_KEY=platform.admin_key, DRYDOCK_TEST_URL=platform.url)
        return subprocess.call(argv[2:], env=env)
    finally:
        platform.stop()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
