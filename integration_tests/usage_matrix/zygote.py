"""A fork server ("zygote") that starts the usage matrices' members with their imports done.

Why: a matrix starts hundreds of members, and each fresh ``python <member script>`` spends
0.5-0.8 CPU-s importing kafka-python, confluent-kafka, aiokafka and this package before it
does anything. On a 2-core machine that is minutes of CPU, taken from the members whose
timings the judges compare. A zygote runs in the members' interpreter, imports a member
script's modules once (the script's top level and its ``PRELOAD``), then forks one child per
member. The child takes the stdin, stdout and stderr the harness sent over a Unix socket and
runs the script as ``__main__``, exactly as ``python script '<config>'`` would (same argv,
environment, unbuffered output, exit code), only with its imports already in ``sys.modules``.

Both sides of every cell start their members from the same zygote, so the judges compare
like with like. What keeps a fork safe: the zygote checks that it runs one thread and built
nothing (imports only: no client, no IO thread, no librdkafka handle); Python reseeds
``random`` in every child; a child closes the zygote's sockets and other children's fds, so
only the harness holds the other end of its pipes and EOF arrives as before. Exits: the
zygote reaps its children and reports each exit code to the harness, which sees it through
:class:`Member`, the part of ``subprocess.Popen`` the harness uses. Nothing outlives the
harness: the zygote ends once the harness's socket closes (its children, whose stdin then
ends, get ``GRACE_S`` to stop, then SIGKILL), and a child dies with its zygote
(``PR_SET_PDEATHSIG``).

The harness side (:func:`spawn`, :func:`close_all`) runs in the test process; the server side
runs as ``python zygote.py <socket fd> <member script>`` and uses the standard library only.
A zygote that cannot start is an error (:class:`ZygoteError`), never a silent fall-back;
``USAGE_MATRIX_FORK_SERVER=0`` starts every member as a fresh process instead (the old way).
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import gc
import importlib
import io
import json
import os
import runpy
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

#: set to 0 to start every member as a fresh process (no fork server)
ENV = "USAGE_MATRIX_FORK_SERVER"
MAX_MESSAGE = 1 << 20  # one request or report (JSON; a member's config and environment)
START_TIMEOUT_S = 180.0  # a zygote's imports on a loaded machine
SPAWN_TIMEOUT_S = 60.0  # a fork and its report
GRACE_S = 30.0  # after the harness went away: its members stop (stdin EOF), else SIGKILL
PR_SET_PDEATHSIG = 1  # linux/prctl.h


def enabled() -> bool:
    return os.environ.get(ENV, "1") != "0"


def describe() -> str:
    """How members are started, for the results file."""
    if enabled():
        return "forked from a fork server that did the imports once (usage_matrix/zygote.py)"
    return f"a fresh Python process each ({ENV}=0)"


class ZygoteError(RuntimeError):
    """A fork server did not start or stopped answering: the run cannot go on as designed."""


# -- the harness side --------------------------------------------------------------------------
class Member:
    """A forked member as the harness sees it: the part of ``subprocess.Popen`` it uses."""

    def __init__(self, args: Sequence[str], stdin: IO[str], stdout: IO[str],
                 server: Zygote) -> None:
        self.args = list(args)
        self.pid = -1  # known once the zygote has forked
        self.stdin = stdin
        self.stdout = stdout
        self.returncode: int | None = None
        self._server = server
        self._done = threading.Event()

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if not self._done.wait(timeout):
            raise subprocess.TimeoutExpired(self.args, timeout or 0.0)
        assert self.returncode is not None
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            self._server.send_signal(self.pid, sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def _exited(self, rc: int) -> None:
        self.returncode = rc
        self._done.set()


class Zygote:
    """One fork server: ``python zygote.py`` for one (interpreter, member script)."""

    def __init__(self, python: str, script: Path, env: Mapping[str, str]) -> None:
        self.python, self.script = python, script
        self._log = tempfile.TemporaryFile("w+")  # noqa: SIM115 - read on failure, closed in close()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.process = subprocess.Popen(
            [python, __file__, str(theirs.fileno()), str(script)], pass_fds=[theirs.fileno()],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._log, env=dict(env))
        theirs.close()
        self._ctrl = ours
        self._lock = threading.Lock()
        self._next = 0
        self._starting: dict[int, tuple[Member, threading.Event]] = {}
        self._members: dict[int, Member] = {}  # pid -> member, until its exit is reported
        self._gone = False
        ours.settimeout(START_TIMEOUT_S)
        try:
            hello = json.loads(ours.recv(MAX_MESSAGE) or b"{}")
        except (OSError, ValueError):
            hello = {}
        if not hello.get("ready"):
            self._fail(f"did not start within {START_TIMEOUT_S:.0f} s")
        ours.settimeout(None)
        self.preloaded: list[str] = hello["preloaded"]
        threading.Thread(target=self._dispatch, name=f"zygote-{self.process.pid}",
                         daemon=True).start()

    def _fail(self, why: str) -> None:
        self.process.kill()
        self.process.wait(10)
        self._ctrl.close()
        self._log.seek(0)
        stderr = self._log.read()
        self._log.close()
        raise ZygoteError(f"the fork server for {self.script.name} on {self.python} {why} "
                          f"(rc {self.process.returncode}); its stderr:\n{stderr}")

    def spawn(self, args: Sequence[str], stderr: IO[str], env: Mapping[str, str]) -> Member:
        """Fork a member running the script with ``args``; its stderr goes to ``stderr``."""
        stdin_r, stdin_w = os.pipe()
        stdout_r, stdout_w = os.pipe()
        member = Member([self.python, str(self.script), *args],
                        open(stdin_w, "w", encoding="utf-8"),  # noqa: SIM115 - the member's
                        open(stdout_r, encoding="utf-8"), self)  # noqa: SIM115
        forked = threading.Event()
        with self._lock:
            self._next += 1
            self._starting[self._next] = (member, forked)
            request = json.dumps({"spawn": self._next, "argv": list(args), "env": dict(env)})
        try:
            socket.send_fds(self._ctrl, [request.encode()], [stdin_r, stdout_w, stderr.fileno()])
        except OSError as exc:
            raise ZygoteError(f"the fork server for {self.script.name} is gone: {exc}") from exc
        finally:
            os.close(stdin_r)
            os.close(stdout_w)
        if not forked.wait(SPAWN_TIMEOUT_S) or member.pid < 0:
            raise ZygoteError(f"the fork server for {self.script.name} did not fork a member "
                              f"within {SPAWN_TIMEOUT_S:.0f} s")
        return member

    def send_signal(self, pid: int, sig: int) -> None:
        """Signal a member by its zygote's handle on it (never a reused pid)."""
        with contextlib.suppress(OSError):  # the zygote is gone: so are its members
            self._ctrl.send(json.dumps({"signal": sig, "pid": pid}).encode())

    def _dispatch(self) -> None:
        """The zygote's reports: a member forked, a member exited."""
        while True:
            try:
                data = self._ctrl.recv(MAX_MESSAGE)
            except OSError:
                data = b""
            if not data:
                break
            report = json.loads(data)
            with self._lock:
                if "spawned" in report:
                    member, forked = self._starting.pop(report["spawned"])
                    member.pid = report.get("pid", -1)
                    if member.pid > 0:
                        self._members[member.pid] = member
                    forked.set()
                elif "exit" in report:
                    self._members.pop(report["exit"])._exited(report["rc"])
        with self._lock:  # the zygote is gone, and its children died with it
            self._gone = True
            for member in self._members.values():
                member._exited(-signal.SIGKILL)
            self._members.clear()
            for _, forked in self._starting.values():
                forked.set()

    def close(self) -> None:
        """Ask the zygote to end (its members, normally all ended by now, get GRACE_S; their
        exits are still reported until it has)."""
        with contextlib.suppress(OSError):
            self._ctrl.shutdown(socket.SHUT_WR)
        try:
            self.process.wait(GRACE_S + 15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)
        self._ctrl.close()
        self._log.close()


_servers: dict[tuple[str, str], Zygote] = {}
_servers_lock = threading.Lock()


def spawn(python: str, script: Path, args: Sequence[str], stderr: IO[str],
          env: Mapping[str, str]) -> Member:
    """Start a member from the zygote of (``python``, ``script``), started with ``env`` on
    first use (a zygote lives until :func:`close_all`)."""
    key = (python, str(script))
    with _servers_lock:
        server = _servers.get(key)
        if server is None:
            server = _servers[key] = Zygote(python, script, env)
    return server.spawn(args, stderr, env)


def close_all() -> None:
    with _servers_lock:
        servers = list(_servers.values())
        _servers.clear()
    for server in servers:
        server.close()


atexit.register(close_all)


# -- the server side (the member's interpreter; the standard library only) --------------------
@dataclass
class _Task:
    """What a forked child runs: the member script as ``__main__``."""

    script: str
    argv: list[str]
    env: dict[str, str]


def _send(ctrl: socket.socket, **report: Any) -> None:
    with contextlib.suppress(OSError):  # the harness is gone; the loop sees it
        ctrl.send(json.dumps(report).encode())


def _preload(script: str) -> list[str]:
    """Import what a member imports: the script's top level, then its ``PRELOAD`` (modules
    the script imports later; one not installed in this interpreter is left to the member)."""
    saved = list(sys.path)
    sys.path.append(str(Path(__file__).resolve().parents[2]))  # integration_tests, last
    try:
        names = runpy.run_path(script, run_name="__zygote__").get("PRELOAD", ())
        loaded = []
        for name in names:
            with contextlib.suppress(ImportError):
                importlib.import_module(name)
                loaded.append(name)
    finally:
        sys.path[:] = saved
    threads = os.listdir("/proc/self/task")
    if len(threads) != 1:  # a fork copies only the forking thread: nothing may run beside it
        raise SystemExit(f"zygote: {len(threads)} threads after importing {names}: cannot fork")
    # the children's collector leaves what they inherit alone: otherwise it touches (and so
    # copies) every page of it, and a member's exit took 0.23 CPU-s instead of 0.06
    gc.freeze()
    return loaded


def serve(ctrl: socket.socket, script: str) -> _Task | None:
    """Fork a child per request until the harness goes away. Returns in a forked child (its
    task; the zygote's fds closed, stdio on the fds sent) and None in the zygote at its end."""
    sel = selectors.DefaultSelector()
    sel.register(ctrl, selectors.EVENT_READ)
    children: dict[int, int] = {}  # pid -> pidfd
    deadline: float | None = None  # once the harness has gone
    killed = False
    while children or deadline is None:
        if deadline is not None and time.monotonic() >= deadline:
            if killed:
                break
            for pidfd in children.values():
                with contextlib.suppress(OSError):
                    signal.pidfd_send_signal(pidfd, signal.SIGKILL)
            killed, deadline = True, time.monotonic() + 10.0
        for key, _ in sel.select(timeout=1.0):
            if key.data is not None:  # a child's pidfd: it exited
                pid = key.data
                sel.unregister(children[pid])
                os.close(children.pop(pid))
                _, status = os.waitpid(pid, 0)
                _send(ctrl, exit=pid, rc=os.waitstatus_to_exitcode(status))
                continue
            try:
                data, fds, _, _ = socket.recv_fds(ctrl, MAX_MESSAGE, 3)
            except OSError:
                data, fds = b"", []
            if not data:  # the harness closed its end, or died
                sel.unregister(ctrl)
                deadline = time.monotonic() + GRACE_S
                continue
            request = json.loads(data)
            if "signal" in request:
                if request["pid"] in children:
                    with contextlib.suppress(OSError):
                        signal.pidfd_send_signal(children[request["pid"]], request["signal"])
                continue
            try:
                pid = os.fork()
            except OSError as exc:
                _send(ctrl, spawned=request["spawn"], error=str(exc))
                pid = -1
            if pid == 0:  # the child: leave the zygote's loop with nothing of it open
                sel.close()
                ctrl.close()
                for pidfd in children.values():
                    os.close(pidfd)
                _become_member(fds)
                return _Task(script, request["argv"], request["env"])
            for fd in fds:
                os.close(fd)
            if pid > 0:
                children[pid] = os.pidfd_open(pid)
                sel.register(children[pid], selectors.EVENT_READ, pid)
                _send(ctrl, spawned=request["spawn"], pid=pid)
    sel.close()
    return None


def _become_member(fds: list[int]) -> None:
    """In a forked child: die with the zygote; stdin, stdout, stderr on the fds the harness
    sent, as a fresh ``PYTHONUNBUFFERED=1`` interpreter has them."""
    zygote = os.getppid()
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != zygote:  # it died before the prctl
        os._exit(1)
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    streams = {"stdin": open(0, encoding="utf-8", closefd=False)}  # noqa: SIM115
    for fd, name, errors in ((1, "stdout", "strict"), (2, "stderr", "backslashreplace")):
        streams[name] = io.TextIOWrapper(open(fd, "wb", buffering=0, closefd=False),  # noqa: SIM115
                                         encoding="utf-8", errors=errors, write_through=True)
    for name, stream in streams.items():
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


def main(argv: Sequence[str]) -> _Task | None:
    ctrl = socket.socket(fileno=int(argv[1]))
    script = argv[2]
    preloaded = _preload(script)
    _send(ctrl, ready=True, preloaded=preloaded, python=sys.version)
    return serve(ctrl, script)


if __name__ == "__main__":
    task = main(sys.argv)
    if task is not None:  # a forked member: run the script as `python script args` would
        os.environ.clear()
        os.environ.update(task.env)
        sys.argv = [task.script, *task.argv]
        runpy.run_path(task.script, run_name="__main__")
