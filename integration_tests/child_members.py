"""Group members run from a script as child processes, reporting JSON-line events.

Shared by the aiokafka and confluent-kafka bridge tests: each member is
``python SCRIPT '<config JSON>'`` with stdout for events and stderr in a temp
file (read back by :meth:`ChildMembers.log_tail` when a check fails).  A
``stop`` line on stdin stops a member cleanly; :meth:`ChildMembers.kill` is a
crash (SIGKILL).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any


@dataclass
class ChildMember:
    name: str
    proc: subprocess.Popen[str]
    log: IO[str]
    events: list[dict[str, Any]] = field(default_factory=list)
    gone: bool = False  # stopped or killed by the test
    reader: threading.Thread | None = None  # reads its stdout until EOF


#: set (to anything) to keep every member's stderr log and events after the group closes
KEEP_LOGS_ENV = "CHILD_MEMBERS_KEEP_LOGS"
#: a logging level for the members (default: the script's, WARNING)
LOG_LEVEL_ENV = "CHILD_MEMBERS_LOG_LEVEL"


def _log_level() -> dict[str, str]:
    level = os.environ.get(LOG_LEVEL_ENV)
    return {"log_level": level} if level else {}


class ChildMembers:
    """Member processes of one group; ``base`` is every member's config, options add to it."""

    def __init__(self, script: Path, base: dict[str, Any]) -> None:
        self.script = script
        self.base = base
        self.members: dict[str, ChildMember] = {}
        self.killed: set[str] = set()
        self._lock = threading.Lock()

    def add(self, name: str, **options: Any) -> ChildMember:
        log = tempfile.NamedTemporaryFile(  # noqa: SIM115 - closed in close()
            "w+", prefix=f"{self.script.stem}-{name}-", suffix=".log", delete=False
        )
        proc = subprocess.Popen(
            [sys.executable, str(self.script),
             json.dumps({**self.base, "name": name, **_log_level(), **options})],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        member = ChildMember(name, proc, log)
        self.members[name] = member
        self.on_added(member)
        member.reader = threading.Thread(target=self._read, args=(member,), daemon=True)
        member.reader.start()
        return member

    def on_added(self, member: ChildMember) -> None:
        """Called once per member before its first event is read."""

    def on_event(self, member: ChildMember, event: dict[str, Any]) -> None:
        """Called for each event, under the lock."""
        member.events.append(event)

    def _read(self, member: ChildMember) -> None:
        assert member.proc.stdout is not None
        for line in member.proc.stdout:
            with contextlib.suppress(ValueError):
                event = json.loads(line)
                with self._lock:
                    self.on_event(member, event)

    def _drained(self, member: ChildMember, timeout: float = 10.0) -> None:
        """After the process exited: wait until its last lines are read. The exit can be seen
        before the reader thread has taken up the final events (a loaded machine showed a
        cleanly stopped member without its ``closed`` event)."""
        if member.reader is not None:
            member.reader.join(timeout)

    def events(self, name: str) -> list[dict[str, Any]]:
        with self._lock:
            return list(self.members[name].events)

    def live(self) -> list[str]:
        return [n for n, m in self.members.items() if not m.gone]

    def wait_event(self, name: str, kind: str, timeout: float = 60.0) -> dict[str, Any]:
        """The member's first ``kind`` event, waited for (bounded)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = next((e for e in self.events(name) if e["event"] == kind), None)
            if found is not None:
                return found
            if self.members[name].proc.poll() is not None:
                self._drained(self.members[name])
                found = next((e for e in self.events(name) if e["event"] == kind), None)
                if found is not None:
                    return found
                break
            time.sleep(0.05)
        raise AssertionError(f"{name} reported no {kind!r} within {timeout} s\n"
                             + self.log_tail(name))

    def go(self, name: str) -> None:
        """Let a member started with ``hold=True`` (and ``ready``) build its consumer."""
        stdin = self.members[name].proc.stdin
        assert stdin is not None
        stdin.write("go\n")
        stdin.flush()

    def stop(self, name: str, timeout: float = 40.0) -> None:
        """Clean stop: the member closes its consumer (last commit, LeaveGroup) and exits."""
        member = self.members[name]
        member.gone = True
        assert member.proc.stdin is not None
        with contextlib.suppress(OSError):
            member.proc.stdin.write("stop\n")
            member.proc.stdin.flush()
        member.proc.wait(timeout)
        self._drained(member)
        assert any(e["event"] == "closed" for e in self.events(name)), self.log_tail(name)

    def kill(self, name: str) -> None:
        """A crash: SIGKILL, no goodbye to the group."""
        member = self.members[name]
        member.gone = True
        self.killed.add(name)
        member.proc.kill()
        member.proc.wait(10)
        self._drained(member)

    def close(self) -> None:
        for name, member in self.members.items():
            if member.proc.poll() is None:
                with contextlib.suppress(Exception):
                    self.stop(name, timeout=20)
            if member.proc.poll() is None:
                member.proc.kill()
                member.proc.wait(10)
            member.log.close()
            if os.environ.get(KEEP_LOGS_ENV):
                # for chasing a rare failure: every member's log and events, kept
                Path(member.log.name + ".events").write_text(
                    "".join(json.dumps(e) + "\n" for e in member.events))
                print(f"child members: kept {member.log.name}", file=sys.stderr)
                continue
            os.unlink(member.log.name)

    def log_text(self, name: str) -> str:
        log = self.members[name].log
        log.flush()
        return Path(log.name).read_text(errors="replace")

    def log_tail(self, name: str, lines: int = 40) -> str:
        text = self.log_text(name).splitlines()
        return f"--- {name} stderr ---\n" + "\n".join(text[-lines:])
