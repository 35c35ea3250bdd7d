"""The platform's final step on a template image (docs/templates.md, "What the platform
keeps"). Run as root in a container of the template's image, on the platform's own
runtime (make_runtime.py) mounted read-only from outside the image, after an empty
/etc/ld.so.preload was put in (so that nothing of the template's is loaded into it):

- /etc/ld.so.preload goes: the dynamic loader reads it whatever program it starts;
- no file keeps a setuid or setgid bit;
- the two sandbox users are exactly the platform's, whatever /etc/passwd and /etc/group
  said of them;
- /session, /tmp, /run/drydock and /opt/drydock are plain folders (mount points), not
  links or files.

Each change is printed, so the build log says what the template had done.
"""

import os
import shutil
import stat
import sys

USERS = (("sandbox", 10001, "/session"), ("supervisor", 10002, "/nonexistent"))
MOUNT_POINTS = (("/session", 10001, 0o700), ("/tmp", 0, 0o1777), ("/run/drydock", 0, 0o755))
NOT_WALKED = {"/proc", "/sys", "/dev"}


def say(message: str) -> None:
    print(f"drydock: {message}", flush=True)


def remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    else:
        os.unlink(path)


def drop_preload() -> None:
    # Emptied by the step before (a COPY, so that nothing is preloaded into this one);
    # the builder has said what the template had put there.
    if os.path.lexists("/etc/ld.so.preload"):
        remove("/etc/ld.so.preload")


def strip_set_id_bits() -> int:
    root_dev = os.lstat("/").st_dev
    stripped = 0
    stack = ["/"]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                if entry.path not in NOT_WALKED and st.st_dev == root_dev:
                    stack.append(entry.path)
            elif stat.S_ISREG(st.st_mode) and st.st_mode & (stat.S_ISUID | stat.S_ISGID):
                os.chmod(entry.path, stat.S_IMODE(st.st_mode) & ~(stat.S_ISUID | stat.S_ISGID), follow_symlinks=False)
                say(f"removed the setuid/setgid bit of {entry.path}")
                stripped += 1
    return stripped


def rewrite_accounts(path: str, ours: list[str], id_field: int) -> None:
    names = {u[0] for u in USERS}
    ids = {str(u[1]) for u in USERS}
    kept = []
    if os.path.isfile(path) and not os.path.islink(path):
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f.read().splitlines():
                fields = line.split(":")
                if len(fields) > id_field and (fields[0] in names or fields[id_field] in ids):
                    if line not in ours:
                        say(f"replaced {path} entry {fields[0]} ({line})")
                    continue
                kept.append(line)
    elif os.path.lexists(path):
        say(f"replaced {path}, which was not a regular file")
        remove(path)
    text = "\n".join(kept + ours) + "\n"
    tmp = f"{path}.drydock"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


def mount_points() -> None:
    for path, uid, mode in MOUNT_POINTS:
        if os.path.lexists(path) and (os.path.islink(path) or not os.path.isdir(path)):
            say(f"replaced {path}, which was not a folder")
            remove(path)
        os.makedirs(path, exist_ok=True)
        os.chown(path, uid, uid, follow_symlinks=False)
        os.chmod(path, mode)


def platform_folder() -> None:
    """/opt/drydock, where the platform's runtime is mounted in every sandbox, is a plain
    folder: a link planted there (into /session, say) would move the mount."""
    for top in ("/opt", "/opt/drydock"):
        if os.path.lexists(top) and (os.path.islink(top) or not os.path.isdir(top)):
            say(f"replaced {top}, which was not a folder")
            remove(top)
        os.makedirs(top, exist_ok=True)


def main() -> None:
    if os.getuid() != 0:
        sys.exit("finalize_image.py runs as root")
    platform_folder()
    drop_preload()
    stripped = strip_set_id_bits()
    os.makedirs("/etc", exist_ok=True)
    rewrite_accounts("/etc/passwd", [f"{n}:x:{i}:{i}::{home}:/usr/sbin/nologin" for n, i, home in USERS], 2)
    rewrite_accounts("/etc/group", [f"{n}:x:{i}:" for n, i, _ in USERS], 2)
    mount_points()
    say(f"platform layer applied ({stripped} setuid/setgid bits removed)")


if __name__ == "__main__":
    main()
