"""Packages installed during a session (kernel.py, _UserSite): with PYTHONUSERBASE set (the
worker sets it, with PIP_USER=1, for sandboxes with network), the user site exists from
the kernel's start, is on sys.path where Python puts it, and what lands in it (a package,
a .pth file, a real `pip install`) is importable in the next cell without a restart, in
kernels forked by the zygote as in those started on their own."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import zipfile
from typing import Any

from repl_test_support import SYSTEM_PYTHON, Client

SANDBOX_UID = 61231
SUPERVISOR_UID = 61232

PIP_ENV = {
    "PIP_USER": "1",
    "PIP_BREAK_SYSTEM_PACKAGES": "1",
    "PIP_NO_CACHE_DIR": "1",
    "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    "PIP_NO_INDEX": "1",
}


def has_pip(python: str) -> bool:
    return subprocess.run([python, "-m", "pip", "--version"], capture_output=True, check=False).returncode == 0


def make_wheel(folder: str, name: str, value: str) -> str:
    """A pure-Python wheel of one package `name` whose VALUE is `value` (no build needed)."""
    dist = f"{name}-0.1.dist-info"
    files = {
        f"{name}/__init__.py": f"VALUE = {value!r}\n",
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n",
        f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: drydock-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for path, text in files.items():
        data = text.encode()
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append(f"{dist}/RECORD,,")
    files[f"{dist}/RECORD"] = "\n".join(record) + "\n"
    wheel = os.path.join(folder, f"{name}-0.1-py3-none-any.whl")
    with zipfile.ZipFile(wheel, "w") as zf:
        for path, text in files.items():
            zf.writestr(path, text)
    os.chmod(wheel, 0o644)
    return wheel


class TestUserSite(unittest.TestCase):
    python = sys.executable
    extra_env: dict[str, str] = {}
    owner: int | None = None  # who may write the user base (the sandbox user)

    def setUp(self) -> None:
        self.base = tempfile.mkdtemp(prefix="drydock-userbase-")
        os.chmod(self.base, 0o755)
        if self.owner is not None:
            os.chown(self.base, self.owner, self.owner)
        self.addCleanup(shutil.rmtree, self.base, True)
        env = {"PYTHONUSERBASE": self.base, **PIP_ENV, **self.extra_env}
        self.repl = Client(env, python=self.python, sandbox_uid=self.owner)
        self.addCleanup(self.repl.close)

    def run_ok(self, code: str) -> str:
        done = self.repl.run(code)
        self.assertEqual(done["status"], "ok", done)
        return str(done["stdout"])

    def run_json(self, code: str) -> Any:
        return json.loads(self.run_ok(code))

    def user_site(self) -> str:
        return str(self.run_json("import json, site\nprint(json.dumps(site.getusersitepackages()))"))

    def test_the_user_site_is_on_the_path_before_the_systems_without_being_made(self) -> None:
        # Not made until something installs into it: a recycled sandbox's packages
        # folder must stay empty after the new kernel starts.
        info = self.run_json(
            "import json, os, site, sys\n"
            "path = site.getusersitepackages()\n"
            "system = [i for i, p in enumerate(sys.path) if p in site.getsitepackages()]\n"
            "print(json.dumps({'dir': os.path.isdir(path), 'on_path': path in sys.path,\n"
            "  'before_system': all(sys.path.index(path) < i for i in system), 'under_base': path.startswith(os.environ['PYTHONUSERBASE']),\n"
            "  'enabled': site.ENABLE_USER_SITE}))"
        )
        self.assertEqual(info, {"dir": False, "on_path": True, "before_system": True, "under_base": True, "enabled": True})
        self.assertEqual(os.listdir(self.base), [])

    def test_a_package_added_after_the_start_is_importable_in_the_next_cell(self) -> None:
        # The failed import lists the user site first (its FileFinder caches the listing),
        # then the package appears, as after a `pip install` in the same cell.
        code = (
            "import os, site\n"
            "try:\n    import drydock_late_pkg\nexcept ImportError:\n    pass\n"
            "pkg = os.path.join(site.getusersitepackages(), 'drydock_late_pkg')\n"
            "os.makedirs(pkg)\n"
            "open(os.path.join(pkg, '__init__.py'), 'w').write('VALUE = 42')\n"
        )
        self.run_ok(code)
        self.assertEqual(self.run_ok("import drydock_late_pkg\nprint(drydock_late_pkg.VALUE)"), "42\n")

    def test_a_package_installed_in_a_cell_imports_in_that_cell(self) -> None:
        # `pip install x` then `import x` in one cell, the user site made by the install,
        # after an import had looked it up while it was missing.
        code = (
            "import os, site\n"
            "try:\n    import drydock_now_pkg\nexcept ImportError:\n    pass\n"
            "pkg = os.path.join(site.getusersitepackages(), 'drydock_now_pkg')\n"
            "os.makedirs(pkg)\n"
            "open(os.path.join(pkg, '__init__.py'), 'w').write('VALUE = 11')\n"
            "import drydock_now_pkg\nprint(drydock_now_pkg.VALUE)"
        )
        self.assertEqual(self.run_ok(code), "11\n")

    def test_a_module_added_in_the_same_clock_tick_is_found_too(self) -> None:
        # The finder is told to list the folder again before each cell: a change that
        # left the folder's mtime as it was (same tick) is not missed.
        code = (
            "import os, site\n"
            "path = site.getusersitepackages()\n"
            "os.makedirs(path, exist_ok=True)\n"
            "before = os.stat(path)\n"
            "try:\n    import drydock_same_tick\nexcept ImportError:\n    pass\n"
            "open(os.path.join(path, 'drydock_same_tick.py'), 'w').write('VALUE = 7')\n"
            "os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))\n"
        )
        self.run_ok(code)
        self.assertEqual(self.run_ok("import drydock_same_tick\nprint(drydock_same_tick.VALUE)"), "7\n")

    def test_a_new_pth_file_is_processed_before_the_next_cell(self) -> None:
        code = (
            "import os, site\n"
            "extra = os.path.join(os.environ['PYTHONUSERBASE'], 'extra')\n"
            "os.mkdir(extra)\n"
            "os.makedirs(site.getusersitepackages(), exist_ok=True)\n"
            "open(os.path.join(extra, 'drydock_pth_mod.py'), 'w').write('VALUE = 5')\n"
            "open(os.path.join(site.getusersitepackages(), 'drydock-extra.pth'), 'w').write(extra + '\\n')\n"
        )
        self.run_ok(code)
        self.assertEqual(self.run_ok("import drydock_pth_mod\nprint(drydock_pth_mod.VALUE)"), "5\n")

    def test_a_respawned_kernel_has_it_too_and_so_have_processes_it_starts(self) -> None:
        site_dir = self.user_site()
        self.run_ok(
            f"import os\nos.makedirs({site_dir!r}, exist_ok=True)\n"
            f"open({os.path.join(site_dir, 'drydock_kept.py')!r}, 'w').write('VALUE = 9')\n"
        )
        self.assertEqual(self.repl.run("import os\nos._exit(3)")["status"], "killed")
        done = self.repl.run("import drydock_kept\nprint(drydock_kept.VALUE)")
        self.assertEqual((done["status"], done["stateLost"], done["stdout"]), ("ok", True, "9\n"), done)
        # Standard Python once the folder exists: a python3 the user starts sees it.
        out = self.run_ok(
            "import subprocess, sys\n"
            "print(subprocess.run([sys.executable, '-c', 'import drydock_kept; print(drydock_kept.VALUE)'],\n"
            "  capture_output=True, text=True).stdout, end='')"
        )
        self.assertEqual(out, "9\n")

    def test_pip_install_then_import_in_the_same_session(self) -> None:
        if not has_pip(self.python):
            self.skipTest(f"no pip in {self.python}")
        wheels = tempfile.mkdtemp(prefix="drydock-wheels-")
        os.chmod(wheels, 0o755)
        self.addCleanup(shutil.rmtree, wheels, True)
        wheel = make_wheel(wheels, "drydock_probe_wheel", "from a wheel")
        self.assertEqual(
            self.run_ok("try:\n    import drydock_probe_wheel\nexcept ImportError:\n    print('not yet')"), "not yet\n"
        )
        done = self.repl.run(
            "import subprocess, sys\n"
            f"p = subprocess.run([sys.executable, '-m', 'pip', 'install', '-q', {wheel!r}], capture_output=True, text=True)\n"
            "print(p.returncode)\n"
            "print(p.stderr, file=sys.stderr)",
            timeout_ms=120_000,
        )
        self.assertEqual((done["status"], done["stdout"]), ("ok", "0\n"), done)
        self.assertEqual(self.run_ok("import drydock_probe_wheel\nprint(drydock_probe_wheel.VALUE)"), "from a wheel\n")
        self.assertIn("drydock_probe_wheel", os.listdir(self.user_site()))


@unittest.skipUnless(os.geteuid() == 0, "the supervisor drops root only when it starts as root")
class TestUserSiteSeparated(TestUserSite):
    # Kernels forked by the zygote, whose real and effective uids differ (Python turns the
    # user site off for it), as the plain sandbox user.
    python = SYSTEM_PYTHON
    owner = SANDBOX_UID
    extra_env = {"DRYDOCK_SANDBOX_UID": str(SANDBOX_UID), "DRYDOCK_SUPERVISOR_UID": str(SUPERVISOR_UID)}

    def test_it_is_the_sandbox_users(self) -> None:
        site_dir = self.user_site()
        self.run_ok(f"import os\nos.makedirs({site_dir!r})")
        self.assertEqual(os.stat(site_dir).st_uid, SANDBOX_UID)
        zygote = int(self.run_ok("import os\nprint(os.getppid())"))
        self.assertNotEqual(zygote, self.repl.ready["pid"])  # forked by the zygote


    def test_a_recycle_empties_the_packages_and_is_clean(self) -> None:
        # A batch sandbox with a network policy: its packages folder is a scratch dir. The
        # setUp's REPL goes first: its kernel is a process of the sandbox user too.
        self.repl.close()
        base = tempfile.mkdtemp(prefix="drydock-packages-")
        os.chown(base, SANDBOX_UID, SANDBOX_UID)
        self.addCleanup(shutil.rmtree, base, True)
        env = {"PYTHONUSERBASE": base, **PIP_ENV, **self.extra_env, "DRYDOCK_SCRATCH_DIRS": base}
        repl = Client(env, python=self.python, sandbox_uid=self.owner)
        self.addCleanup(repl.close)
        done = repl.run(
            "import os, site\nos.makedirs(site.getusersitepackages())\n"
            "open(os.path.join(site.getusersitepackages(), 'drydock_left.py'), 'w').write('X = 1')\nimport drydock_left"
        )
        self.assertEqual(done["status"], "ok", done)
        repl.send({"op": "recycle", "id": "r1"})
        frame = repl.next_frame()
        self.assertEqual((frame["ev"], frame["clean"], frame["problems"]), ("recycled", True, []), frame)
        self.assertEqual(os.listdir(base), [])
        done = repl.run("try:\n    import drydock_left\n    print('kept')\nexcept ImportError:\n    print('gone')")
        self.assertEqual((done["status"], done["stdout"]), ("ok", "gone\n"), done)


class TestWithoutUserBase(unittest.TestCase):
    def test_nothing_is_made_without_pythonuserbase(self) -> None:
        home = tempfile.mkdtemp(prefix="drydock-home-")
        self.addCleanup(shutil.rmtree, home, True)
        repl = Client({"HOME": home, "PYTHONUSERBASE": ""})  # "": unset, for Python too
        self.addCleanup(repl.close)
        done = repl.run("import site\nprint(site.getusersitepackages().startswith(__import__('os').environ['HOME']))")
        self.assertEqual((done["status"], done["stdout"]), ("ok", "True\n"), done)
        self.assertEqual(os.listdir(home), [])


if __name__ == "__main__":
    unittest.main()
