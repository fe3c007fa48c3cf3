"""Kafka's Java consumer as the alone side of the consumer-protocol matrix: its column.

Ours is kafka-python with ``group_protocol="consumer"`` (``kafka_python_member.py``, as in
``kafka_python.consumer_protocol_client``); alone is Kafka's own ``KafkaConsumer`` with
``group.protocol=consumer`` and ``group.remote.assignor=balanced-sticky``, on the same broker
and workload at the same moment. The Java members of a side are threads of one JVM
(``JavaUsageMember.java`` beside this file, compiled once per process against the
kafka-clients jar the image build resolved, as ``benchmarks/java/RebalanceMember.java`` is):
:class:`JavaHost` starts it when the side is made, and each member looks to
:class:`~.workload.Side` like a member process (:class:`JavaMember`): its own event lines,
commands and exit code.

The cells are the Python ones, each used the Java consumer's way (the idiom is in the cell's
title); the iterator cells are left out (:data:`LEFT_OUT`). Like kafka-python's members, a
Java member's lost membership is read from what the client logs (fenced, or
``max.poll.interval.ms`` exceeded: the two cases ours logs too), mapped to the member by the
``clientId`` Kafka's log context puts on every line.
"""

from __future__ import annotations

import contextlib
import json
import queue
import re
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import IO, Any

from .kafka_python import BASE_OPTIONS, CELLS
from .plans import Cell, Client

SOURCE = Path(__file__).with_name("JavaUsageMember.java")
#: Kafka's log lines reach the JVM's stderr through log4j (the image's jars)
LOG_JARS = ("log4j-api-*.jar", "log4j-core-*.jar", "log4j-slf4j-impl-*.jar")
#: warnings and errors as they come; of the consumer's own INFO lines only its heartbeat's
#: fencing (FENCED_MEMBER_EPOCH or UNKNOWN_MEMBER_ID: it then drops its partitions as lost
#: and rejoins at epoch 0)
LOG4J = """\
status = error
appender.err.type = Console
appender.err.name = err
appender.err.target = SYSTEM_ERR
appender.err.layout.type = PatternLayout
appender.err.layout.pattern = %d{HH:mm:ss.SSS} %p %c{1} %m%n
appender.fenced.type = Console
appender.fenced.name = fenced
appender.fenced.target = SYSTEM_ERR
appender.fenced.layout.type = PatternLayout
appender.fenced.layout.pattern = %d{HH:mm:ss.SSS} %p %c{1} %m%n
appender.fenced.filter.only.type = RegexFilter
appender.fenced.filter.only.regex = .*(is fenced|is unknown)[.] in .*
appender.fenced.filter.only.onMatch = ACCEPT
appender.fenced.filter.only.onMismatch = DENY
rootLogger.level = warn
rootLogger.appenderRef.err.ref = err
logger.member.name = org.apache.kafka.clients.consumer.internals
logger.member.level = info
logger.member.additivity = false
logger.member.appenderRef.err.ref = err
logger.member.appenderRef.err.level = warn
logger.member.appenderRef.fenced.ref = fenced
"""
#: what the Java consumer logs when its member loses its membership: its heartbeat fenced by
#: the broker (``AbstractHeartbeatRequestManager``, INFO), or max.poll.interval.ms exceeded
#: (it leaves; WARN)
EXPELLED = re.compile(r"clientId=([^,\]]+),.*"
                      r"(is fenced\.|is unknown\.|Consumer poll timeout has expired)")
CLIENT_ID = re.compile(r"clientId=([^,\]]+),")
#: kafka-python option -> the Java consumer's property
PROPERTIES = {"auto_offset_reset": "auto.offset.reset",
              "enable_auto_commit": "enable.auto.commit",
              "auto_commit_interval_ms": "auto.commit.interval.ms",
              "max_poll_interval_ms": "max.poll.interval.ms"}
#: the broker's on this protocol (the Java consumer refuses them; ours drops them too)
BROKER_SIDE = ("session_timeout_ms", "heartbeat_interval_ms")
JVM_OPTIONS = ("-Xss512k", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1")

#: cell key -> how the Java consumer does what the cell's usage does
IDIOMS = {
    "poll": "`poll(Duration.ofMillis(1000))` loop",
    "poll0": "`poll(Duration.ZERO)` loop",
    "max-records": "`max.poll.records=10`, `poll(1000)` loop",
    "auto-commit": "`enable.auto.commit=true`, `auto.commit.interval.ms=1000`",
    "commit": "`commitSync()` after every batch",
    "commit-async": "`commitAsync(callback)` after every batch, `commitSync()` before "
                    "`close()`",
    "listener-commit": "`commitSync(offsets)` in `onPartitionsRevoked` (Java's documented "
                       "pattern: judged here)",
    "listener-commit-async": "`commitAsync(offsets, callback)` in `onPartitionsRevoked`",
    "pattern": "`subscribe(SubscriptionPattern)`: the broker-side regex, as ours",
    "subscription-change": "`subscribe(List.of(a))`, then `subscribe(List.of(a, b))`",
    "static": "`group.instance.id`",
    "slow-session": "8 s per batch; session and heartbeat interval: the broker's, as ours",
    "slow-max-poll": "one batch of 25 s > `max.poll.interval.ms` 20 s",
    "pause-resume": "`pause(assignment())`, 1.5 s later `resume(paused())`",
    "seek": "`seek(tp, offset)` back to the failed record",
    "close-during-rebalance": "`close()`",
    "unsubscribe": "`unsubscribe()`, 2 s later `subscribe()` again",
    "assign": "manual `assign()`",
}
#: cells without a Java equivalent, and why they are not in the Java column
LEFT_OUT = {
    "iterator": "Java has no iterator over a consumer: its idiom is the poll loop, the "
                "`poll` cell",
    "iterator-timeout": "Java has no iterator (nor `consumer_timeout_ms`): its idiom is the "
                        "poll loop, the `poll` cell",
}


def java_cells() -> tuple[Cell, ...]:
    """The Python cells with the Java idiom in each title, minus :data:`LEFT_OUT`."""
    cells = []
    for cell in CELLS:
        if cell.key in LEFT_OUT:
            continue
        cells.append(replace(cell, title=f"{cell.title}; Java: {IDIOMS[cell.key]}",
                             not_judged=""))  # the Java consumer can do all the rest
    return tuple(cells)


def classpath() -> str:
    """The compiled member with kafka-clients and log4j (raises without javac or the jars)."""
    from benchmarks._timing_clients import java_classpath

    return java_classpath(SOURCE, LOG_JARS)


class _Lines:
    """A member's stdout as :class:`~.workload.Side` reads it: its lines until it exits."""

    def __init__(self) -> None:
        self._queue: queue.Queue[str | None] = queue.Queue()

    def put(self, line: str | None) -> None:
        self._queue.put(line)

    def __iter__(self) -> Iterator[str]:
        while (line := self._queue.get()) is not None:
            yield line


class _Commands:
    """A member's stdin: the matrix's JSON commands, passed to the JVM as its lines."""

    def __init__(self, host: JavaHost, name: str) -> None:
        self._host, self._name = host, name

    def write(self, text: str) -> int:
        for line in text.splitlines():
            if line.strip():
                cmd = json.loads(line)
                arg = cmd.get("topics", cmd.get("seconds"))
                arg = ",".join(arg) if isinstance(arg, list) else arg
                self._host.send(" ".join(["do", self._name, cmd["do"],
                                          *([] if arg is None else [str(arg)])]))
        return len(text)

    def flush(self) -> None:
        """Each command went out as it was written."""


class JavaMember:
    """One Java member as a process of the side: the part of ``subprocess.Popen`` it uses."""

    def __init__(self, host: JavaHost, name: str, log: IO[str]) -> None:
        self.name = name
        self.log = log
        self.stdin = _Commands(host, name)
        self.stdout = _Lines()
        self.returncode: int | None = None
        self._done = threading.Event()

    def exited(self, rc: int) -> None:
        if self.returncode is None:
            self.returncode = rc
            self.stdout.put(None)
            self._done.set()

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if not self._done.wait(timeout):
            raise subprocess.TimeoutExpired(self.name, timeout or 0.0)
        assert self.returncode is not None
        return self.returncode

    def kill(self) -> None:
        """A thread cannot be killed: it is given up as hung (-9); the JVM goes at the end."""
        self.exited(-9)


class JavaHost:
    """One JVM hosting a side's Java members (see the module docstring)."""

    def __init__(self, bootstrap: str) -> None:
        self.bootstrap = bootstrap
        self._dir = tempfile.TemporaryDirectory(prefix="usage-matrix-java-")
        config = Path(self._dir.name) / "log4j2.properties"
        config.write_text(LOG4J)
        self._proc = subprocess.Popen(
            ["java", *JVM_OPTIONS, f"-Dlog4j2.configurationFile={config}", "-cp", classpath(),
             "JavaUsageMember"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            encoding="utf-8")
        self._lock = threading.Lock()
        self.members: dict[str, JavaMember] = {}
        self._early: list[str] = []  # the JVM's log before its first member (a failed start)
        self._readers = [threading.Thread(target=self._read_events, daemon=True),
                         threading.Thread(target=self._read_log, daemon=True)]
        for reader in self._readers:
            reader.start()

    def send(self, line: str) -> None:
        assert self._proc.stdin is not None
        with self._lock, contextlib.suppress(OSError, ValueError):
            self._proc.stdin.write(line + "\n")
            self._proc.stdin.flush()

    def spawn(self, config: Mapping[str, Any], log: IO[str]) -> JavaMember:
        """Start a member from the config a Python member gets (workload.Side.start)."""
        name = str(config["name"])
        member = JavaMember(self, name, log)
        with self._lock:
            self.members[name] = member
            log.writelines(self._early)
        if "pattern" in config:
            kind, what = "pattern", str(config["pattern"])
        elif "partitions" in config:
            kind, what = "partitions", ",".join(f"{t}:{p}" for t, p in config["partitions"])
        else:
            kind, what = "topics", ",".join(config["topics"])
        tokens = ["add", name, "1" if config.get("hold") else "0", str(config["usage"]), kind,
                  what, str(config.get("batch_s", 0)),
                  *(f"{k}={v}" for k, v in properties(config).items())]
        assert not any(re.search(r"\s", t) for t in tokens), tokens
        self.send(" ".join(tokens))
        return member

    def _read_events(self) -> None:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            member = self.members.get(str(event.get("member")))
            if member is None:
                continue
            if event["event"] == "_exit":
                member.exited(int(event["rc"]))
            else:
                member.stdout.put(line)
        rc = self._proc.wait()
        for member in list(self.members.values()):  # the JVM ended: so did its members
            member.exited(rc or -1)

    def _read_log(self) -> None:
        """The JVM's log into the members' logs; a lost membership as the member's event."""
        assert self._proc.stderr is not None
        for line in self._proc.stderr:
            named = CLIENT_ID.search(line) or re.match(r"\[member (\S+)\]", line)
            with self._lock:
                owners = ([self.members[named.group(1)]] if named and named.group(1) in self.members
                          else list(self.members.values()))
                if not self.members:
                    self._early.append(line)
            for member in owners:
                with contextlib.suppress(ValueError):  # its log closed already
                    member.log.write(line)
            lost = EXPELLED.search(line)
            if lost and lost.group(1) in self.members:
                self.members[lost.group(1)].stdout.put(json.dumps(
                    {"event": "expelled", "mono": round(time.monotonic(), 4),
                     "how": line.strip()[:200]}) + "\n")

    def close(self) -> None:
        """End of the side: every member is stopped by then; the JVM exits (else SIGKILL)."""
        with contextlib.suppress(OSError, ValueError):
            if self._proc.stdin is not None:
                self._proc.stdin.close()
        try:
            self._proc.wait(30)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait(10)
        for reader in self._readers:
            reader.join(10)
        self._dir.cleanup()


def properties(config: Mapping[str, Any]) -> dict[str, str]:
    """The Java consumer's properties for a member config of the matrix (an option this
    does not know is an error, never dropped in silence)."""
    protocol, _, assignor = str(config["strategy"]).partition(":")
    if protocol != "consumer":
        raise ValueError(f"the Java column runs the consumer group protocol only: {config}")
    props = {"bootstrap.servers": str(config["bootstrap"]), "group.id": str(config["group_id"]),
             "group.protocol": "consumer", "group.remote.assignor": assignor}
    if config.get("static_id"):
        props["group.instance.id"] = str(config["static_id"])
    for key, value in dict(config.get("options", {})).items():
        if key in BROKER_SIDE:
            continue
        props[PROPERTIES[key]] = str(value).lower() if isinstance(value, bool) else str(value)
    return props


def client() -> Client:
    """Ours (kafka-python, ``group_protocol="consumer"``) beside Kafka's Java consumer on
    the same protocol and assignor, judged as the cooperative column (both incremental)."""
    import kafka

    from .kafka_python import consumer_protocol_client

    ours = consumer_protocol_client()
    version = next(Path(p).name for p in classpath().split(":")
                   if Path(p).name.startswith("kafka-clients-"))

    def describe() -> dict[str, Any]:
        return {"kafka-python": kafka.__version__,
                "Java consumer": version.removesuffix(".jar").removeprefix("kafka-clients-"),
                "consumer runtime": "ours: kafka_assignors.kafka_python.KafkaConsumer with "
                                    "group_protocol='consumer', group_remote_assignor="
                                    "'balanced-sticky'; alone: Kafka's Java KafkaConsumer "
                                    "with group.protocol=consumer, group.remote.assignor="
                                    "balanced-sticky (one JVM a side, a thread a member)",
                "cells left out of the Java column": "; ".join(
                    f"{key}: {why}" for key, why in LEFT_OUT.items())}

    return Client(
        name="kafka-python-consumer-protocol-java",
        version=kafka.__version__,
        script=ours.script,
        strategies={"cooperative": (ours.strategies["cooperative"][0],
                                    ("Java consumer (group.protocol=consumer)",
                                     "consumer:balanced-sticky"))},
        cells=java_cells(),
        base_options=BASE_OPTIONS,
        describe=describe,
        alone_host=JavaHost,
    )
