"""Builds the platform's own Python runtime at <dest> (run by the image's python3 while
the sandbox image is built).

The supervisor runs on this copy, never on the image's `python3`: a template's steps run
as root and may replace the image's interpreter, its standard library or the shared
objects it loads (docs/decisions/016-template-registry.md). What is copied:

  <dest>/bin/python3         the interpreter's binary
  <dest>/lib/pythonX.Y/      its standard library with lib-dynload, without
                             site-packages and dist-packages (nothing installed)
  <dest>/sys/                every shared object those load (found with ldd), the
                             dynamic loader among them as `ld.so`

Started as `<dest>/sys/ld.so --library-path <dest>/sys <dest>/bin/python3 -I -S`, it
loads nothing of the image's: the loader is ours, the libraries come from our folder,
and the prefix Python finds from its binary's place holds only our standard library.
"""

import os
import shutil
import subprocess
import sys
import sysconfig

# Nothing installed, and what the supervisor never loads: the static library for
# embedding Python (config-*, 30 MB), tests, GUI, documentation and packaging tools.
SKIPPED = {"site-packages", "dist-packages", "test", "idlelib", "tkinter", "turtledemo", "ensurepip", "lib2to3", "pydoc_data", "distutils"}


def shared_objects(path: str) -> list[str]:
    """The absolute paths of what `ldd` says `path` loads, the loader included."""
    out = subprocess.run(["ldd", path], capture_output=True, text=True).stdout
    found = []
    for line in out.splitlines():
        parts = line.split()
        if "=>" in parts:
            target = parts[parts.index("=>") + 1]
            if target.startswith("/"):
                found.append(target)
        elif parts and parts[0].startswith("/"):
            found.append(parts[0])
    return found


def main(dest: str) -> None:
    exe = os.path.realpath(sys.executable)
    stdlib = sysconfig.get_path("stdlib")
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    os.makedirs(os.path.join(dest, "bin"))
    os.makedirs(os.path.join(dest, "sys"))
    shutil.copy2(exe, os.path.join(dest, "bin", "python3"))
    shutil.copytree(stdlib, os.path.join(dest, "lib", version), symlinks=False,
                    ignore=lambda _dir, names: [n for n in names if n in SKIPPED or n.startswith(("_tkinter", "config-"))])

    elves = [exe]
    for root, _dirs, files in os.walk(os.path.join(dest, "lib", version, "lib-dynload")):
        elves += [os.path.join(root, f) for f in files if f.endswith(".so")]
    loader = None
    libraries: set[str] = set()
    for elf in elves:
        for lib in shared_objects(elf):
            if os.path.basename(lib).startswith("ld-linux"):
                loader = lib
            else:
                libraries.add(lib)
    if loader is None:
        sys.exit(f"ldd named no dynamic loader for {exe}")
    shutil.copy(os.path.realpath(loader), os.path.join(dest, "sys", "ld.so"))
    for lib in sorted(libraries):
        shutil.copy(os.path.realpath(lib), os.path.join(dest, "sys", os.path.basename(lib)))

    # The copy must stand on its own: its prefix, and nothing installed importable.
    check = subprocess.run(
        [os.path.join(dest, "sys", "ld.so"), "--library-path", os.path.join(dest, "sys"),
         os.path.join(dest, "bin", "python3"), "-I", "-S", "-c",
         "import sys, json, hashlib, ctypes, ssl, select, socket, pty, termios, fcntl;"
         "print(sys.prefix); print(sys.path)"],
        capture_output=True, text=True, env={},
    )
    if check.returncode != 0 or check.stdout.splitlines()[0] != dest:
        sys.exit(f"the runtime at {dest} does not start on its own: {check.stdout}{check.stderr}")
    print(f"runtime at {dest}: {len(libraries)} shared objects, stdlib of {version}")


if __name__ == "__main__":
    main(sys.argv[1])
