"""The usage matrices' fork server (``usage_matrix/zygote.py``) with plain processes, no broker:
a forked member behaves as the fresh ``python script '<config>'`` it replaces (argv,
environment, stdout lines as they are printed, EOF on stdin, exit codes, kill), holds no other
member's fds, and nothing outlives the harness."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from .usage_matrix import zygote

#: a member script: reports itself, then obeys stdin until EOF (exit 0)
MEMBER = textwrap.dedent('''
    import json, os, random, sys, time
    import fork_server_probe

    PRELOAD = ("fork_server_probe_later", "no_such_module_anywhere")

    def fds():
        listed = os.listdir("/proc/self/fd")  # its own directory fd is closed again after
        return sorted(int(fd) for fd in listed if os.path.exists(f"/proc/self/fd/{fd}"))

    def main():
        import fork_server_probe_later
        print(json.dumps({"pid": os.getpid(), "argv": sys.argv[1:], "fds": fds(),
                          "env": os.environ.get("FORK_SERVER_TEST"), "random": random.random(),
                          "imported_by": [fork_server_probe.PID, fork_server_probe_later.PID],
                          "name": __name__}))  # no flush: unbuffered, as PYTHONUNBUFFERED=1
        for line in sys.stdin:
            cmd = json.loads(line)
            if cmd["do"] == "echo":
                print(json.dumps(cmd))
            elif cmd["do"] == "exit":
                sys.exit(cmd["rc"])
            elif cmd["do"] == "raise":
                raise RuntimeError("the member failed")
            elif cmd["do"] == "hang":
                time.sleep(3600)

    if __name__ == "__main__":
        main()
''')
BOUND_S = 30.0


@pytest.fixture
def script(tmp_path: Path) -> Path:
    for name in ("fork_server_probe", "fork_server_probe_later"):
        (tmp_path / f"{name}.py").write_text("import os\nPID = os.getpid()\n")
    path = tmp_path / "member.py"
    path.write_text(MEMBER)
    return path


def _env(script: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": str(script.parent),
            "FORK_SERVER_TEST": "from the harness"}


@pytest.fixture
def server(script: Path) -> Iterator[zygote.Zygote]:
    server = zygote.Zygote(sys.executable, script, _env(script))
    yield server
    server.close()


@pytest.fixture
def log(tmp_path: Path) -> Iterator[IO[str]]:
    with open(tmp_path / "members.log", "w+") as f:
        yield f


def _line(member: zygote.Member, timeout: float = BOUND_S) -> str:
    """The member's next stdout line ("" at EOF), waiting at most ``timeout``."""
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(member.stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    assert got, f"no line from member {member.pid} within {timeout} s"
    return got[0]


def _hello(member: zygote.Member) -> dict[str, Any]:
    hello: dict[str, Any] = json.loads(_line(member))
    return hello


def _tell(member: zygote.Member, **cmd: Any) -> None:
    member.stdin.write(json.dumps(cmd) + "\n")
    member.stdin.flush()


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z"


def test_a_member_runs_the_script_as_main_with_its_imports_done(
        server: zygote.Zygote, log: IO[str]) -> None:
    member = server.spawn(['{"name": "m1"}', "second"], log, _env(server.script))
    hello = _hello(member)
    assert hello["pid"] == member.pid != server.process.pid
    assert hello["argv"] == ['{"name": "m1"}', "second"]
    assert hello["env"] == "from the harness"
    assert hello["name"] == "__main__"
    # the script's top level and its PRELOAD were imported once, by the zygote
    assert hello["imported_by"] == [server.process.pid, server.process.pid]
    assert server.preloaded == ["fork_server_probe_later"]  # the missing one left out
    _tell(member, do="echo", text="a line")
    assert json.loads(_line(member)) == {"do": "echo", "text": "a line"}
    member.stdin.close()  # EOF on stdin ends it, as the core going away does
    assert member.wait(BOUND_S) == 0
    assert _line(member) == ""


def test_exit_codes_reach_the_harness(server: zygote.Zygote, log: IO[str]) -> None:
    env = _env(server.script)
    exits, raises, hangs = (server.spawn(["{}"], log, env) for _ in range(3))
    for member in (exits, raises, hangs):
        _hello(member)
    _tell(exits, do="exit", rc=3)
    _tell(raises, do="raise")
    assert exits.wait(BOUND_S) == 3
    assert raises.wait(BOUND_S) == 1
    assert hangs.poll() is None
    with pytest.raises(subprocess.TimeoutExpired):
        hangs.wait(0.2)
    hangs.terminate()
    assert hangs.wait(BOUND_S) == -signal.SIGTERM
    assert hangs.returncode == -signal.SIGTERM
    log.flush()
    assert "RuntimeError: the member failed" in Path(log.name).read_text()


def test_kill_ends_a_busy_member_and_its_stdout(server: zygote.Zygote, log: IO[str]) -> None:
    member = server.spawn(["{}"], log, _env(server.script))
    _hello(member)
    _tell(member, do="hang")
    time.sleep(0.2)
    member.kill()
    assert member.wait(BOUND_S) == -signal.SIGKILL
    assert _line(member) == ""
    assert _gone(member.pid)
    member.kill()  # after its exit: nothing happens (its pid is never signalled again)


def test_members_hold_no_fds_of_each_other(server: zygote.Zygote, log: IO[str]) -> None:
    env = _env(server.script)
    first = server.spawn(["{}"], log, env)
    second = server.spawn(["{}"], log, env)
    hellos = [_hello(first), _hello(second)]
    assert [h["fds"] for h in hellos] == [[0, 1, 2], [0, 1, 2]]
    assert hellos[0]["random"] != hellos[1]["random"]  # reseeded in each child
    first.stdin.close()  # the second holds no end of the first's pipes: EOF arrives
    assert first.wait(BOUND_S) == 0
    assert _line(first) == ""
    assert second.poll() is None
    _tell(second, do="echo", text="still here")
    assert json.loads(_line(second))["text"] == "still here"
    second.stdin.close()
    assert second.wait(BOUND_S) == 0


def test_members_die_with_their_zygote(server: zygote.Zygote, log: IO[str]) -> None:
    member = server.spawn(["{}"], log, _env(server.script))
    _hello(member)
    server.process.kill()
    assert member.wait(BOUND_S) == -signal.SIGKILL
    deadline = time.monotonic() + BOUND_S
    while not _gone(member.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _gone(member.pid)
    with pytest.raises(zygote.ZygoteError):
        server.spawn(["{}"], log, _env(server.script))


HARNESS = textwrap.dedent('''
    import json, os, sys
    from pathlib import Path
    from integration_tests.usage_matrix import zygote
    script = Path(sys.argv[1])
    env = {**os.environ, "PYTHONPATH": str(script.parent)}
    server = zygote.Zygote(sys.executable, script, env)
    member = server.spawn(["{}"], sys.stderr, env)
    print(json.dumps({"zygote": server.process.pid, "member": member.pid}), flush=True)
    member.stdout.readline()
    os._exit(0)  # the harness goes away without closing anything
''')


def test_nothing_outlives_the_harness(script: Path) -> None:
    checkout = Path(__file__).resolve().parents[1]
    harness = subprocess.run([sys.executable, "-c", HARNESS, str(script)], capture_output=True,
                             text=True, timeout=120, cwd=checkout,
                             env={**os.environ, "PYTHONPATH": str(checkout)})
    assert harness.returncode == 0, harness.stderr
    pids = json.loads(harness.stdout)
    deadline = time.monotonic() + BOUND_S
    while not all(map(_gone, pids.values())) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert all(map(_gone, pids.values())), f"still running: {pids}"


@pytest.mark.parametrize("top_level, why", [
    ("raise SystemExit('cannot import this')", "cannot import this"),
    ("import threading, time\nthreading.Thread(target=time.sleep, args=(60,), daemon=True)"
     ".start()", "2 threads"),
])
def test_a_zygote_that_cannot_serve_fails_loudly(tmp_path: Path, top_level: str,
                                                 why: str) -> None:
    script = tmp_path / "member.py"
    script.write_text(top_level + "\n")
    with pytest.raises(zygote.ZygoteError, match=why):
        zygote.Zygote(sys.executable, script, _env(script))
