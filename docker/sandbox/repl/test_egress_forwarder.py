"""Network egress (drydock_supervisor/egress_forwarder.py): a TCP port on loopback relayed
to a Unix socket, both ways, half-closes included; started by the supervisor when
DRYDOCK_EGRESS_SOCKET is set, as its own user (closed to user code) with two users.

The forwarder is forked from a small helper process here (forking the test process, with
its threads, is not what the supervisor does), or from a real supervisor."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from collections.abc import Callable, Iterator

from drydock_supervisor.egress_forwarder import MAX_RELAYS
from repl_test_support import HERE, SYSTEM_PYTHON, Client, pid_alive

SANDBOX_UID = 61231
SUPERVISOR_UID = 61232
BIG = 50 * 1024 * 1024

# Forks a forwarder (as the supervisor does) and prints its pid; exits when its stdin
# closes. argv: socket path, listen address, "poll" to do without PR_SET_PDEATHSIG.
HELPER = r"""
import os, sys
sys.path.insert(0, sys.argv[1])
from drydock_supervisor import egress_forwarder
from drydock_supervisor.privileges import Identity
if sys.argv[4:] == ["poll"]:
    egress_forwarder._set_pdeathsig = lambda signum: False
pid = egress_forwarder.start_forwarder(sys.argv[2], sys.argv[3], Identity(None, None, os.getuid()))
print(pid, flush=True)
sys.stdin.read()
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_gone(pid: int, timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while pid_alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def recv_all(sock: socket.socket) -> bytes:
    chunks = []
    while True:
        data = sock.recv(1 << 16)
        if not data:
            return b"".join(chunks)
        chunks.append(data)


class UnixServer:
    """What the worker's proxy stands for: a Unix socket whose every connection is given
    to `handler` on a thread of its own."""

    def __init__(self, path: str, handler: Callable[[socket.socket], None]) -> None:
        self.path = path
        self.handler = handler
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        self.sock.listen(128)
        self.connections = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        with conn:
            with contextlib.suppress(OSError):
                self.handler(conn)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()


def echo(conn: socket.socket) -> None:
    """Echoes until the client's EOF, then ends: only a passed-on half-close ends it."""
    while True:
        data = conn.recv(1 << 16)
        if not data:
            return
        conn.sendall(data)


def http_responder(conn: socket.socket) -> None:
    """A stand-in for the proxy: answers any request with its request line as the body."""
    head = b""
    while b"\r\n\r\n" not in head:
        data = conn.recv(4096)
        if not data:
            return
        head += data
    body = head.split(b"\r\n", 1)[0]
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body))


class ForwarderCase(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = tempfile.mkdtemp(prefix="drydock-egress-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.path = os.path.join(self.dir, "egress.sock")

    def serve(self, handler: Callable[[socket.socket], None]) -> UnixServer:
        server = UnixServer(self.path, handler)
        self.addCleanup(server.close)
        return server

    def start(self, path: str | None = None, poll: bool = False, pass_fds: tuple[int, ...] = ()) -> tuple[subprocess.Popen[str], int, int]:
        """A helper that forked a forwarder: (the helper, the forwarder's pid, its port)."""
        port = free_port()
        argv = [sys.executable, "-c", HELPER, HERE, path or self.path, f"127.0.0.1:{port}"] + (["poll"] if poll else [])
        log = tempfile.TemporaryFile()  # the forwarder's complaints, kept out of the test output
        self.addCleanup(log.close)
        helper = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True, pass_fds=pass_fds)
        self.addCleanup(self._stop, helper)
        assert helper.stdout is not None
        pid = int(helper.stdout.readline())  # listening already: the port is bound before the fork
        return helper, pid, port

    @staticmethod
    def _stop(helper: subprocess.Popen[str]) -> None:
        if helper.poll() is None:
            helper.kill()
        helper.wait()
        for stream in (helper.stdin, helper.stdout):
            if stream is not None:
                stream.close()

    @contextlib.contextmanager
    def connect(self, port: int) -> Iterator[socket.socket]:
        sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        try:
            yield sock
        finally:
            sock.close()


class TestRelay(ForwarderCase):
    def test_bytes_go_both_ways_and_the_half_close_is_passed_on(self) -> None:
        self.serve(echo)
        _, _, port = self.start()
        with self.connect(port) as sock:
            sock.sendall(b"hello ")
            self.assertEqual(sock.recv(100), b"hello ")
            sock.sendall(b"world")
            sock.shutdown(socket.SHUT_WR)
            # The echo server ends only when it sees our EOF, through the forwarder.
            self.assertEqual(recv_all(sock), b"world")

    def test_the_servers_half_close_is_passed_on_and_the_client_may_still_send(self) -> None:
        got: list[bytes] = []

        def greet_then_listen(conn: socket.socket) -> None:
            conn.sendall(b"greeting")
            conn.shutdown(socket.SHUT_WR)
            got.append(recv_all(conn))

        self.serve(greet_then_listen)
        _, _, port = self.start()
        with self.connect(port) as sock:
            self.assertEqual(recv_all(sock), b"greeting")  # EOF: the server's half-close
            sock.sendall(b"still talking")
            sock.shutdown(socket.SHUT_WR)
            deadline = time.monotonic() + 10
            while not got and time.monotonic() < deadline:
                time.sleep(0.01)
        self.assertEqual(got, [b"still talking"])

    def test_fifty_connections_at_once(self) -> None:
        self.serve(echo)
        _, _, port = self.start()
        results: dict[int, bytes] = {}
        errors: list[BaseException] = []
        barrier = threading.Barrier(50)

        def one(i: int) -> None:
            try:
                with self.connect(port) as sock:
                    barrier.wait(timeout=30)  # all 50 open at the same time
                    message = f"connection {i} ".encode() * 1000
                    sock.sendall(message)
                    sock.shutdown(socket.SHUT_WR)
                    results[i] = recv_all(sock)
            except BaseException as exc:  # noqa: BLE001
                errors.append(exc)

        threads = [threading.Thread(target=one, args=(i,)) for i in range(50)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        self.assertEqual(errors, [])
        self.assertEqual(results, {i: f"connection {i} ".encode() * 1000 for i in range(50)})

    def test_fifty_megabytes_arrive_intact(self) -> None:
        blob = os.path.join(self.dir, "blob")
        with open(blob, "wb") as f:
            for _ in range(BIG // (1 << 20)):
                f.write(os.urandom(1 << 20))
        with open(blob, "rb") as f:
            expected = hashlib.sha256(f.read()).hexdigest()

        def send_blob(conn: socket.socket) -> None:
            conn.recv(100)
            with open(blob, "rb") as f:
                conn.sendfile(f)  # no GIL held: the test's reader gets the CPU it needs

        self.serve(send_blob)
        _, _, port = self.start()

        def download(connect: Callable[[], socket.socket]) -> float:
            buf = bytearray(BIG)
            view = memoryview(buf)
            with contextlib.closing(connect()) as sock:
                started = time.perf_counter()
                sock.sendall(b"GET")
                got = 0
                while got < BIG:
                    n = sock.recv_into(view[got:])
                    if not n:
                        break
                    got += n
                elapsed = time.perf_counter() - started
                self.assertEqual(sock.recv(1), b"")
            self.assertEqual(got, BIG)
            self.assertEqual(hashlib.sha256(buf).hexdigest(), expected)
            return BIG / elapsed / 1e6

        def unix() -> socket.socket:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.connect(self.path)
            return sock

        direct = max(download(unix) for _ in range(3))
        relayed = max(download(lambda: socket.create_connection(("127.0.0.1", port), timeout=30)) for _ in range(3))
        print(f"\n50 MB: {relayed:.0f} MB/s through the forwarder, {direct:.0f} MB/s straight from the Unix socket", file=sys.stderr)

    def test_no_socket_closes_the_connection(self) -> None:
        _, _, port = self.start(path=os.path.join(self.dir, "missing.sock"))
        with self.connect(port) as sock:
            sock.settimeout(10)
            try:
                sock.sendall(b"GET http://example.com/ HTTP/1.1\r\n\r\n")
                self.assertEqual(sock.recv(100), b"")
            except ConnectionResetError:
                pass  # closed with our bytes unread: a reset, just as good
        # And it carries on once the proxy is there.
        os.rename(self.serve(echo).path, os.path.join(self.dir, "missing.sock"))
        with self.connect(port) as sock:
            sock.sendall(b"back")
            sock.shutdown(socket.SHUT_WR)
            self.assertEqual(recv_all(sock), b"back")

    def test_connections_past_the_limit_are_closed_at_once(self) -> None:
        server = self.serve(echo)  # holds each connection until the client's EOF
        _, _, port = self.start()
        socks = [socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(MAX_RELAYS)]
        self.addCleanup(lambda: [s.close() for s in socks])
        deadline = time.monotonic() + 20
        while server.connections < MAX_RELAYS:  # every one relayed, each holding a slot
            self.assertLess(time.monotonic(), deadline, f"{server.connections} relayed")
            time.sleep(0.01)
        with self.connect(port) as extra:
            extra.settimeout(10)
            with contextlib.suppress(ConnectionResetError):
                self.assertEqual(extra.recv(1), b"")
        self.assertEqual(server.connections, MAX_RELAYS)
        # A relay that ends frees its slot.
        socks.pop().close()
        deadline = time.monotonic() + 10
        while True:
            with self.connect(port) as again:
                try:
                    again.sendall(b"in")
                    again.shutdown(socket.SHUT_WR)
                    if recv_all(again) == b"in":
                        break
                except OSError:  # closed at once (reset, not connected): still full
                    pass
            self.assertLess(time.monotonic(), deadline, "no slot came free")
            time.sleep(0.05)


class TestProcess(ForwarderCase):
    def test_the_forwarder_dies_with_its_parent(self) -> None:
        for poll in (False, True):  # PR_SET_PDEATHSIG, and the thread watching getppid()
            with self.subTest(poll=poll):
                helper, pid, _ = self.start(poll=poll)
                self.assertTrue(pid_alive(pid))
                helper.kill()
                helper.wait()
                self.assertTrue(wait_gone(pid), f"forwarder {pid} outlived its parent")

    def test_the_forwarder_keeps_none_of_its_parents_fds(self) -> None:
        self.serve(echo)
        r, w = os.pipe()
        self.addCleanup(os.close, r)
        helper, pid, port = self.start(pass_fds=(w,))
        os.close(w)
        # The helper still holds w; once it is gone, nobody does: EOF.
        helper.kill()
        helper.wait()
        os.set_blocking(r, False)
        deadline = time.monotonic() + 10
        while True:
            try:
                self.assertEqual(os.read(r, 1), b"")
                break
            except BlockingIOError:
                self.assertLess(time.monotonic(), deadline, "someone still holds the pipe")
                time.sleep(0.02)

    def test_it_ignores_sigint(self) -> None:
        self.serve(echo)
        _, pid, port = self.start()
        os.kill(pid, signal.SIGINT)
        time.sleep(0.2)
        self.assertTrue(pid_alive(pid))
        with self.connect(port) as sock:
            sock.sendall(b"x")
            sock.shutdown(socket.SHUT_WR)
            self.assertEqual(recv_all(sock), b"x")

    def test_a_taken_port_is_no_forwarder(self) -> None:
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen(1)
            port = taken.getsockname()[1]
            argv = [sys.executable, "-c", HELPER, HERE, self.path, f"127.0.0.1:{port}"]
            out = subprocess.run(argv, input="", capture_output=True, text=True, timeout=20, check=True)
        self.assertEqual(out.stdout.strip(), "None")
        self.assertIn("egress forwarder: cannot listen", out.stderr)


def children_named(parent: int, comm: str) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        command = stat[stat.index(b"(") + 1 : stat.rindex(b")")].decode()
        fields = stat[stat.rindex(b")") + 2 :].split()
        if command == comm and int(fields[1]) == parent and fields[0] not in (b"Z", b"X"):
            found.append(int(name))
    return found


FETCH = (
    "import urllib.request\n"
    "print(urllib.request.urlopen('http://example.test/hello', timeout=10).read().decode())"
)


class SupervisorCase(unittest.TestCase):
    """A supervisor with DRYDOCK_EGRESS_SOCKET set (and HTTP_PROXY, as the worker sets it)."""

    def setUp(self) -> None:
        self.dir = tempfile.mkdtemp(prefix="drydock-egress-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.path = os.path.join(self.dir, "egress.sock")
        self.port = free_port()

    def env(self, **more: str) -> dict[str, str]:
        return {
            "DRYDOCK_EGRESS_SOCKET": self.path,
            "DRYDOCK_EGRESS_LISTEN": f"127.0.0.1:{self.port}",
            "HTTP_PROXY": f"http://127.0.0.1:{self.port}",
            **more,
        }


class TestSupervisor(SupervisorCase):
    def test_user_code_reaches_the_proxy_through_the_forwarder(self) -> None:
        server = UnixServer(self.path, http_responder)
        self.addCleanup(server.close)
        repl = Client(self.env())
        self.addCleanup(repl.close)
        done = repl.run(FETCH)
        self.assertEqual((done["status"], done["stdout"]), ("ok", "GET http://example.test/hello HTTP/1.1\n"), done)
        [forwarder] = children_named(repl.ready["pid"], "drydock-egress")
        repl.close()
        self.assertTrue(wait_gone(forwarder), "the forwarder outlived the supervisor")

    def test_a_dead_forwarder_leaves_the_supervisor_as_it_was(self) -> None:
        # Its exit is never collected (nothing waits for any child): a zombie that no
        # wait of the supervisor's takes for one of its own processes.
        repl = Client(self.env())
        self.addCleanup(repl.close)
        [forwarder] = children_named(repl.ready["pid"], "drydock-egress")
        os.kill(forwarder, signal.SIGKILL)
        self.assertTrue(wait_gone(forwarder))
        self.assertEqual(repl.run("print(2)")["stdout"], "2\n")
        self.assertEqual(repl.run("import os\nos._exit(1)")["status"], "killed")
        done = repl.run("print(3)")
        self.assertEqual((done["stdout"], done["stateLost"]), ("3\n", True), done)
        done = repl.shell("echo hi; exit 4")
        self.assertEqual((done["stdout"], done["exitCode"]), ("hi\n", 4), done)
        self.assertEqual(repl.run(FETCH)["status"], "error")  # no network any more

    def test_no_forwarder_is_no_network_and_the_session_works(self) -> None:
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", self.port))  # bound, not listening: connections are refused
            repl = Client(self.env())
            self.addCleanup(repl.close)
            done = repl.run(FETCH)
        self.assertEqual((done["status"], done["error"]["name"]), ("error", "URLError"), done)
        self.assertEqual(repl.run("print(1)")["stdout"], "1\n")
        self.assertIn("no network egress", repl.read_log())

    def test_without_the_variable_there_is_no_forwarder(self) -> None:
        repl = Client()
        self.addCleanup(repl.close)
        self.assertEqual(repl.run("print(1)")["stdout"], "1\n")
        self.assertEqual(children_named(repl.ready["pid"], "drydock-egress"), [])


@unittest.skipUnless(os.geteuid() == 0, "the supervisor drops root only when it starts as root")
class TestSupervisorSeparated(SupervisorCase):
    def setUp(self) -> None:
        super().setUp()
        # What the worker makes: a folder, and in it the socket, of the supervisor's user only.
        os.chown(self.dir, SUPERVISOR_UID, SUPERVISOR_UID)
        os.chmod(self.dir, 0o700)
        self.server = UnixServer(self.path, http_responder)
        self.addCleanup(self.server.close)
        os.chown(self.path, SUPERVISOR_UID, SUPERVISOR_UID)
        os.chmod(self.path, 0o600)
        self.scratch = tempfile.mkdtemp(prefix="drydock-scratch-")
        os.chown(self.scratch, SANDBOX_UID, SANDBOX_UID)
        self.addCleanup(shutil.rmtree, self.scratch, True)
        env = self.env(
            DRYDOCK_SANDBOX_UID=str(SANDBOX_UID), DRYDOCK_SUPERVISOR_UID=str(SUPERVISOR_UID), DRYDOCK_SCRATCH_DIRS=self.scratch
        )
        # The host channel on a socket in the same folder, as in a sandbox.
        channel = os.path.join(self.dir, "channel.sock")
        self.repl = Client(env, python=SYSTEM_PYTHON, sandbox_uid=SANDBOX_UID, channel_socket=channel)
        self.addCleanup(self.repl.close)

    def test_user_code_reaches_the_proxy_through_the_forwarder(self) -> None:
        done = self.repl.run(FETCH)
        self.assertEqual((done["status"], done["stdout"]), ("ok", "GET http://example.test/hello HTTP/1.1\n"), done)

    def test_the_forwarder_is_the_supervisors_user_and_closed_to_user_code(self) -> None:
        [forwarder] = children_named(self.repl.ready["pid"], "drydock-egress")
        with open(f"/proc/{forwarder}/status") as f:
            ids = {line.split(":")[0]: line.split()[1:4] for line in f if line.startswith(("Uid:", "Gid:"))}
        self.assertEqual(ids, {"Uid": [str(SUPERVISOR_UID)] * 3, "Gid": [str(SUPERVISOR_UID)] * 3})
        # Of the supervisor's fds (the host channel above all) it holds none: /dev/null as
        # stdin and stdout, the container log as stderr, its listener.
        fds = {int(fd): os.readlink(f"/proc/{forwarder}/fd/{fd}") for fd in os.listdir(f"/proc/{forwarder}/fd")}
        stderr = os.readlink(f"/proc/{self.repl.ready['pid']}/fd/2")
        self.assertEqual((fds.pop(0), fds.pop(1), fds.pop(2)), ("/dev/null", "/dev/null", stderr))
        self.assertEqual(len(fds), 1, fds)
        self.assertTrue(next(iter(fds.values())).startswith("socket:"), fds)
        code = f"""
import ctypes, errno, json, os, signal, socket
out = {{}}
for name, sig in (("kill", signal.SIGKILL), ("stop", signal.SIGSTOP)):
    try:
        os.kill({forwarder}, sig); out[name] = "sent"
    except OSError as exc:
        out[name] = type(exc).__name__
libc = ctypes.CDLL(None, use_errno=True)
out["ptrace"] = errno.errorcode.get(ctypes.get_errno()) if libc.ptrace(16, {forwarder}, None, None) else "attached"
s = socket.socket(socket.AF_UNIX)
try:
    s.connect({self.path!r}); out["unix"] = "connected"
except OSError as exc:
    out["unix"] = type(exc).__name__
print(json.dumps(out))
"""
        done = self.repl.run(code)
        self.assertEqual(done["status"], "ok", done)
        self.assertEqual(
            json.loads(done["stdout"]),
            {"kill": "PermissionError", "stop": "PermissionError", "ptrace": "EPERM", "unix": "PermissionError"},
        )
        self.assertTrue(pid_alive(forwarder))

    def test_it_ends_with_the_supervisor(self) -> None:
        [forwarder] = children_named(self.repl.ready["pid"], "drydock-egress")
        self.repl.proc.kill()  # not even a chance to clean up
        self.repl.proc.wait()
        self.assertTrue(wait_gone(forwarder), "the forwarder outlived the supervisor")

    def test_recycle_is_clean_and_keeps_the_forwarder(self) -> None:
        [forwarder] = children_named(self.repl.ready["pid"], "drydock-egress")
        self.repl.run("import os, signal\nos.kill(-1, signal.SIGKILL)")
        self.repl.send({"op": "recycle", "id": "r1"})
        frame = self.repl.next_frame()
        self.assertEqual((frame["ev"], frame["clean"], frame["problems"]), ("recycled", True, []), frame)
        self.assertEqual(children_named(self.repl.ready["pid"], "drydock-egress"), [forwarder])
        done = self.repl.run(FETCH)
        self.assertEqual((done["status"], done["stdout"]), ("ok", "GET http://example.test/hello HTTP/1.1\n"), done)


if __name__ == "__main__":
    unittest.main()
