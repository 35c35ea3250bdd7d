"""The spawner: a small process of the plain sandbox user that starts commands for the
supervisor with posix_spawn (a vfork), so a command costs a vfork and an exec instead
of a fork of the supervisor (with its ids to change in the child, which rules out
vfork: about 2 ms more per command on a slow day, bench/commands).

Run as `python3 -I -S spawner.py <fd>` by the supervisor, as the sandbox user with all
three ids set: what it starts is exactly what user code could start. It is not
dumpable, so user code (same uid) cannot reach its channel through /proc; it can kill
or stop it, which only costs its own session the fast path: the supervisor then starts
commands itself (commands.py) and starts a new spawner later.

Channel (a SOCK_SEQPACKET socketpair, one JSON message per packet):
  supervisor -> spawner  {"op": "spawn", "argv": [...], "cwd": str, "env": {...}} with the
                         command's stdin, stdout and stderr fds attached
                         {"op": "spawn-pty", ...} the same with a terminal's pty slave attached
  spawner -> supervisor  {"ev": "spawned", "pid": int}
                         {"ev": "failed", "errno": int, "strerror": str, "filename": str}
                         {"ev": "exit", "pid": int, "code": int}  (as Popen.returncode)
"""

from __future__ import annotations

import ctypes
import fcntl
import errno
import json
import os
import selectors
import shutil
import signal
import socket
import sys
import termios

PACKET = 1 << 20  # argv + env of one command (bounded by the gateway far below this)


def make_undumpable() -> None:
    try:
        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0
    except (OSError, AttributeError):
        pass


def spawn(message: dict, fds: list[int]) -> dict:
    argv, cwd, env = message["argv"], message["cwd"], message["env"]
    try:
        os.chdir(cwd)
    except OSError as exc:
        return {"ev": "failed", "errno": exc.errno or 0, "strerror": exc.strerror or str(exc), "filename": cwd}
    actions = [(os.POSIX_SPAWN_DUP2, fd, target) for fd, target in zip(fds, (0, 1, 2))]
    # Python ignores SIGPIPE and SIGXFSZ; a command gets the defaults back, as from
    # subprocess (restore_signals), so `yes | head` ends.
    options = {"file_actions": actions, "setsid": True, "setsigdef": (signal.SIGPIPE, signal.SIGXFSZ)}
    # Looked up on the command's own PATH, as a shell would (posix_spawnp would use ours).
    path = argv[0] if "/" in argv[0] else shutil.which(argv[0], path=env.get("PATH", os.defpath))
    global _posix_spawn_works
    try:
        if path is None:
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), argv[0])
        if _posix_spawn_works:
            try:
                pid = os.posix_spawn(path, argv, env, **options)
            except PermissionError:
                # gVisor with the OCI seccomp profile answers clone3 with EPERM, not the
                # profile's ENOSYS, so the C library never falls back to clone: fork.
                _posix_spawn_works = False
        if not _posix_spawn_works:
            pid = _fork_exec(path, argv, env, fds)
    except OSError as exc:
        return {"ev": "failed", "errno": exc.errno or 0, "strerror": exc.strerror or str(exc), "filename": argv[0]}
    finally:
        os.chdir("/")
    return {"ev": "spawned", "pid": pid}


# Whether posix_spawn (a vfork) starts processes here; a fork and an exec otherwise.
_posix_spawn_works = True


def _fork_exec(path: str, argv: list[str], env: dict, fds: list[int]) -> int:
    """What posix_spawn does with those options, by fork: the command's fds as 0, 1, 2,
    a session of its own, default SIGPIPE and SIGXFSZ; an exec failure is raised here."""
    ready_r, ready_w = os.pipe2(os.O_CLOEXEC)
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child only sets up and execs
        try:
            os.close(ready_r)
            os.setsid()
            for fd, target in zip(fds, (0, 1, 2)):
                os.dup2(fd, target)
            for number in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGCHLD):
                signal.signal(number, signal.SIG_DFL)
            signal.set_wakeup_fd(-1)
            os.execve(path, argv, env)
        except OSError as exc:
            os.write(ready_w, str(exc.errno or errno.EIO).encode())
        except BaseException:
            os.write(ready_w, str(errno.EIO).encode())
        os._exit(127)
    os.close(ready_w)
    try:
        failure = os.read(ready_r, 16)
    finally:
        os.close(ready_r)
    if failure:
        code = int(failure)
        raise OSError(code, os.strerror(code), path)
    return pid


def spawn_pty(message: dict, fds: list[int]) -> dict:
    """A terminal's shell: forked (a vfork cannot set a controlling terminal), made the
    leader of a new session whose controlling terminal is the pty slave it was given."""
    argv, cwd, env = message["argv"], message["cwd"], message["env"]
    if not os.path.isdir(cwd):
        return {"ev": "failed", "errno": errno.ENOENT, "strerror": os.strerror(errno.ENOENT), "filename": cwd}
    # Answered once the shell is exec'd, as posix_spawn answers: the pipe closes on exec
    # (or carries the errno that stopped it), so the shell's session and process group
    # exist before anyone may signal them.
    ready_r, ready_w = os.pipe2(os.O_CLOEXEC)
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child only sets up its terminal and execs
        try:
            os.close(ready_r)
            os.setsid()
            fcntl.ioctl(fds[0], termios.TIOCSCTTY, 0)
            for target in (0, 1, 2):
                os.dup2(fds[0], target)
            os.chdir(cwd)
            for number in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGCHLD):
                signal.signal(number, signal.SIG_DFL)
            signal.set_wakeup_fd(-1)
            os.execvpe(argv[0], argv, env)
        except OSError as exc:
            os.write(ready_w, str(exc.errno or errno.EIO).encode())
        except BaseException:
            os.write(ready_w, str(errno.EIO).encode())
        os._exit(127)
    os.close(ready_w)
    try:
        failure = os.read(ready_r, 16)
    finally:
        os.close(ready_r)
    if failure:
        code = int(failure)
        return {"ev": "failed", "errno": code, "strerror": os.strerror(code), "filename": argv[0]}
    return {"ev": "spawned", "pid": pid}


def main() -> int:
    sock = socket.socket(fileno=int(sys.argv[1]))
    os.set_inheritable(sock.fileno(), False)
    make_undumpable()
    wake_r, wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    selector = selectors.DefaultSelector()
    selector.register(sock, selectors.EVENT_READ, "host")
    selector.register(wake_r, selectors.EVENT_READ, "child")
    sock.send(b'{"ev": "ready"}')
    while True:
        for key, _ in selector.select():
            if key.data == "child":
                try:
                    while os.read(wake_r, 4096):
                        pass
                except BlockingIOError:
                    pass
                reap(sock)
                continue
            try:
                data, fds, _flags, _addr = socket.recv_fds(sock, PACKET, 3)
            except InterruptedError:
                continue
            except OSError:
                return 0
            if not data:
                return 0  # the supervisor is gone
            for fd in fds:
                os.set_inheritable(fd, False)  # only their dup2 copies reach the command
            try:
                message = json.loads(data)
                if message.get("op") == "spawn" and len(fds) == 3:
                    answer = spawn(message, fds)
                elif message.get("op") == "spawn-pty" and len(fds) == 1:
                    answer = spawn_pty(message, fds)
                else:
                    answer = {"ev": "failed", "errno": errno.EINVAL, "strerror": "bad request", "filename": ""}
            except (ValueError, KeyError, TypeError):
                answer = {"ev": "failed", "errno": errno.EINVAL, "strerror": "bad request", "filename": ""}
            finally:
                for fd in fds:
                    os.close(fd)
            sock.send(json.dumps(answer).encode())


def reap(sock: socket.socket) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        sock.send(json.dumps({"ev": "exit", "pid": pid, "code": os.waitstatus_to_exitcode(status)}).encode())


if __name__ == "__main__":
    sys.exit(main())
