"""Group members from other client libraries: confluent-kafka processes and the Java console
consumer that ships with the broker jars (run in a container of the broker image).

Both report what they read as ``record`` events (member, topic, partition, offset, value,
mono) like the harness's kafka-python members, so one check covers every library. Every
wait is bounded and every process/container is stopped by ``close()`` (and at exit).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

log = logging.getLogger(__name__)

Event = dict[str, Any]


class _Events:
    """Thread-safe event list with a bounded wait."""

    def __init__(self) -> None:
        self._events: list[Event] = []
        self._cond = threading.Condition()
        self.ended = False

    def add(self, event: Event) -> None:
        with self._cond:
            self._events.append(event)
            self._cond.notify_all()

    def end(self) -> None:
        with self._cond:
            self.ended = True
            self._cond.notify_all()

    def snapshot(self) -> list[Event]:
        with self._cond:
            return list(self._events)

    def wait_for(self, predicate: Callable[[list[Event]], bool], timeout: float,
                 what: str) -> None:
        deadline = time.monotonic() + timeout
        with self._cond:
            while not predicate(self._events):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")
                self._cond.wait(min(remaining, 0.5))


_OPEN: set[Any] = set()


def _close_all() -> None:
    for client in list(_OPEN):
        with contextlib.suppress(Exception):
            client.close()


atexit.register(_close_all)


class ConfluentMember:
    """A confluent-kafka consumer in its own process (see ``_confluent_member``)."""

    def __init__(self, bootstrap: str, group_id: str, topics: Sequence[str], strategy: str,
                 *, name: str, session_timeout_ms: int = 10_000) -> None:
        self.name = name
        self.strategies = strategy.split(",")
        cfg = {"name": name, "bootstrap": bootstrap, "group_id": group_id,
               "topics": list(topics), "strategy": strategy,
               "session_timeout_ms": session_timeout_ms}
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys([*sys.path, env.get("PYTHONPATH", "")]))
        self._stderr = tempfile.NamedTemporaryFile(  # noqa: SIM115 (closed in close())
            "w+", prefix=f"confluent-{name}-", suffix=".log", delete=False)
        self._proc = subprocess.Popen(
            [sys.executable, "-u", "-m", "integration_tests.test_e2e._confluent_member",
             json.dumps(cfg)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
            text=True, env=env,
        )
        self.events = _Events()
        self._reader = threading.Thread(target=self._read, daemon=True, name=f"cf-{name}")
        self._reader.start()
        _OPEN.add(self)

    def _read(self) -> None:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            with contextlib.suppress(json.JSONDecodeError):
                self.events.add(json.loads(line))
        self.events.end()

    def assignment(self) -> frozenset[tuple[str, int]]:
        """The full assignment as of the last assigned/revoked callback."""
        for e in reversed(self.events.snapshot()):
            if e.get("event") in ("assigned", "revoked"):
                return frozenset((str(t), int(p)) for t, p in e["assignment"])
        return frozenset()

    def records(self) -> list[Event]:
        return [e for e in self.events.snapshot() if e.get("event") == "record"]

    def errors(self) -> list[str]:
        return [str(e.get("message")) for e in self.events.snapshot() if e.get("event") == "error"]

    def log(self) -> str:
        """The process's stderr (librdkafka's and Python's messages)."""
        with open(self._stderr.name, encoding="utf-8", errors="replace") as fh:
            return fh.read()

    def close(self, timeout: float = 20.0) -> None:
        """Stop cleanly (leaves the group), escalating to SIGKILL; bounded."""
        _OPEN.discard(self)
        if self._proc.poll() is None:
            with contextlib.suppress(OSError, ValueError):
                assert self._proc.stdin is not None
                self._proc.stdin.write("stop\n")
                self._proc.stdin.close()
            try:
                self._proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait(timeout=10)
        self._reader.join(timeout=10)
        self._stderr.close()
        with contextlib.suppress(OSError):
            os.unlink(self._stderr.name)


#: DefaultMessageFormatter with print.partition/print.offset: "Partition:3\tOffset:12\tvalue"
_CONSOLE_LINE = re.compile(r"^Partition:(\d+)\s+Offset:(\d+)\s+(.*)$")

#: wire names -> the Java client's assignor classes
JAVA_ASSIGNORS = {
    "range": "org.apache.kafka.clients.consumer.RangeAssignor",
    "roundrobin": "org.apache.kafka.clients.consumer.RoundRobinAssignor",
    "sticky": "org.apache.kafka.clients.consumer.StickyAssignor",
    "cooperative-sticky": "org.apache.kafka.clients.consumer.CooperativeStickyAssignor",
}


class JavaConsoleConsumer:
    """``kafka-console-consumer.sh`` (the Java client) in a container of the broker image,
    on the host network, joined to ``group_id`` with the given strategies (wire names).

    Records it prints are parsed into ``record`` events. The console consumer prints no
    rebalance callbacks: read its assignment back from the group (DescribeGroups) by its
    client id, ``name``.
    """

    def __init__(self, image: str, bootstrap: str, group_id: str, topic: str,
                 strategies: Sequence[str], *, name: str,
                 session_timeout_ms: int = 10_000) -> None:
        # docker.from_env is DockerClient.from_env; "import docker" is the repository's
        # docker/ directory to mypy (as in kafka_assignors.embedded)
        from docker.client import DockerClient

        self.name = name
        self.strategies = list(strategies)
        self.events = _Events()
        classes = ",".join(JAVA_ASSIGNORS[s] for s in strategies)
        command = [
            "--bootstrap-server", bootstrap, "--topic", topic, "--group", group_id,
            "--from-beginning",
            "--consumer-property", f"client.id={name}",
            "--consumer-property", f"partition.assignment.strategy={classes}",
            "--consumer-property", f"session.timeout.ms={session_timeout_ms}",
            "--consumer-property", "heartbeat.interval.ms=1000",
            "--consumer-property", "group.protocol=classic",
            "--property", "print.partition=true", "--property", "print.offset=true",
        ]
        self._client = DockerClient.from_env(timeout=60)
        self._container = self._client.containers.run(
            image,
            command=command,
            entrypoint=["/opt/kafka/bin/kafka-console-consumer.sh"],
            network_mode="host",
            detach=True,
            environment={"KAFKA_TOOLS_HEAP_OPTS": "-Xmx192m"},
            labels={
                "io.kafka-assignors.role": "java-console-consumer",
                "io.kafka-assignors.owner-pid": str(os.getpid()),
                "io.kafka-assignors.owner-host": socket.gethostname(),
                "io.kafka-assignors.keep": "0",
            },
        )
        _OPEN.add(self)
        self._topic = topic
        self._reader = threading.Thread(target=self._read, daemon=True, name=f"java-{name}")
        self._reader.start()

    def _read(self) -> None:
        buffer = b""
        try:
            for chunk in self._container.logs(stream=True, follow=True, stdout=True,
                                              stderr=False):
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for raw in lines:
                    self._line(raw.decode("utf-8", "replace"))
        except Exception as exc:  # container removed under us
            log.debug("java console consumer log stream ended: %s", exc)
        self.events.end()

    def _line(self, line: str) -> None:
        match = _CONSOLE_LINE.match(line.strip())
        if match:
            self.events.add({"event": "record", "member": self.name, "topic": self._topic,
                             "partition": int(match[1]), "offset": int(match[2]),
                             "value": match[3], "mono": time.monotonic()})

    def records(self) -> list[Event]:
        return [e for e in self.events.snapshot() if e.get("event") == "record"]

    def logs(self) -> str:
        """The container's stderr (the tool's warnings and errors)."""
        try:
            raw = self._container.logs(stdout=False, stderr=True)
        except Exception as exc:
            return f"<no logs: {exc}>"
        return bytes(raw).decode("utf-8", "replace")

    def close(self, timeout: float = 20.0) -> None:
        """SIGTERM (the tool closes its consumer and leaves the group), then remove."""
        _OPEN.discard(self)
        with contextlib.suppress(Exception):
            self._container.stop(timeout=int(timeout))
        with contextlib.suppress(Exception):
            self._container.remove(force=True)
        self._reader.join(timeout=10)
        with contextlib.suppress(Exception):
            self._client.close()
