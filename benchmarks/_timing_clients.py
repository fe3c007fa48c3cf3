"""The variants of ``benchmarks.rebalance_timings`` and how their members run.

Every variant runs as a :class:`ClientGroup`: a :class:`kafka_assignors.embedded.GroupRunner`
whose members may be kafka-python processes (the runner's own), confluent-bridge or
aiokafka processes (:mod:`benchmarks._timing_members`), or threads of one JVM running
Kafka's Java consumer (``benchmarks/java/RebalanceMember.java``, compiled at run time
against the kafka-clients jar the image build resolved). They all report the same JSON
events, so the group waits and the measurements are the same for every variant.
"""

from __future__ import annotations

import atexit
import contextlib
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from kafka_assignors.embedded import GroupRunner
from kafka_assignors.embedded.events import MemberView
from kafka_assignors.embedded.groups import _child_env, _Member


@dataclass(frozen=True)
class Variant:
    #: kafka-python | confluent | aiokafka | java
    client: str
    #: what the client is given (kafka-python: 'module:Class'; confluent/aiokafka: wire
    #: name; java: assignor class)
    strategy: str
    #: kafka-python: the runtime's KafkaConsumer (False: a plain kafka.KafkaConsumer);
    #: aiokafka: kafka_assignors.aiokafka.AIOKafkaConsumer (False: aiokafka's own)
    runtime: bool = True
    #: the consumer group protocol (KIP-848): the broker assigns with ``strategy``
    consumer_protocol: bool = False
    #: where join -> stable comes from (documentation)
    stable_source: str = "members' state events (kafka-python's member state, generation "\
        "and assignment())"


_BRIDGE = ("members' state events (the membership client's state and generation, "
           "librdkafka's assignment())")

_AIOKAFKA = ("members' state events (coordinator generation, no reassignment in progress, "
             "assignment())")

VARIANTS: dict[str, Variant] = {
    "eager": Variant("kafka-python", "kafka_assignors:BalancedStickyAssignor"),
    "cooperative-plain": Variant("kafka-python",
                                 "kafka_assignors:CooperativeBalancedStickyAssignor", False),
    "cooperative": Variant("kafka-python", "kafka_assignors:CooperativeBalancedStickyAssignor"),
    "bridge-eager": Variant("confluent", "balanced-sticky", stable_source=_BRIDGE),
    "bridge-cooperative": Variant("confluent", "cooperative-balanced-sticky",
                                  stable_source=_BRIDGE),
    "aiokafka-eager": Variant("aiokafka", "balanced-sticky", False, stable_source=_AIOKAFKA),
    # aiokafka alone: its own consumer and assignor
    "aiokafka-roundrobin": Variant("aiokafka", "roundrobin", False, stable_source=_AIOKAFKA),
    # kafka_assignors.aiokafka.AIOKafkaConsumer: the cooperative protocol
    "aiokafka-cooperative": Variant("aiokafka", "cooperative-balanced-sticky",
                                    stable_source=_AIOKAFKA),
    "consumer-protocol": Variant(
        "kafka-python", "balanced-sticky", consumer_protocol=True,
        stable_source="members' state events (the KIP-848 member's state STABLE, its "
        "epoch and assignment())"),
    "java-consumer-protocol": Variant(
        "java", "consumer:balanced-sticky", consumer_protocol=True,
        stable_source="members' state events (epoch and assignment after each poll) and "
        "rebalance callbacks"),
    "java-cooperative": Variant(
        "java", "org.apache.kafka.clients.consumer.CooperativeStickyAssignor",
        stable_source="rebalance callbacks (onPartitionsAssigned ends each round)"),
}

JAVA_SOURCE = Path(__file__).with_name("java") / "RebalanceMember.java"


def _jars_dir() -> Path:
    """The Kafka jars the image build (docker/build-image.sh) resolved into its cache."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kafka-assignors"
    found = sorted(glob.glob(str(cache / "jars-*" / "libs" / "kafka-clients-*.jar")))
    if not found:
        raise RuntimeError(f"no kafka-clients jar under {cache}/jars-*/libs: run "
                           "docker/build-image.sh (or make image) first")
    return Path(found[-1]).parent


_JAVA: dict[tuple[Path, tuple[str, ...]], str] = {}
_JAVA_LOCK = threading.Lock()
#: the kafka-clients jar and what its consumer needs at run time
CLIENT_JARS = ("kafka-clients-*.jar", "slf4j-api-*.jar", "lz4-java-*.jar", "snappy-java-*.jar",
               "zstd-jni-*.jar")


def java_classpath(source: Path = JAVA_SOURCE, extra_jars: tuple[str, ...] = ()) -> str:
    """Compile a Java member (``RebalanceMember.java`` unless told) once per process (into a
    temp dir); its classpath: the kafka-clients jars plus the ``extra_jars`` patterns."""
    with _JAVA_LOCK:
        key = (source, extra_jars)
        if key not in _JAVA:
            libs = _jars_dir()
            jars = [str(p) for pattern in (*CLIENT_JARS, *extra_jars)
                    for p in sorted(libs.glob(pattern))]
            out = tempfile.mkdtemp(prefix="kafka-assignors-java-")
            atexit.register(shutil.rmtree, out, True)
            subprocess.run(["javac", "-nowarn", "-cp", jars[0], "-d", out, str(source)],
                           check=True, capture_output=True, text=True, timeout=180)
            _JAVA[key] = os.pathsep.join([out, *jars])
        return _JAVA[key]


class ClientGroup(GroupRunner):
    """A GroupRunner whose members run on the variant's client library."""

    def __init__(self, variant: Variant, bootstrap: str, group_id: str, topic: str,
                 **member_options: Any) -> None:
        self.variant = variant
        self._jvm: subprocess.Popen[str] | None = None
        self._jvm_views: dict[str, MemberView] = {}
        if variant.consumer_protocol and variant.client == "kafka-python":
            member_options["consumer_config"] = {
                **member_options.get("consumer_config", {}), "group_protocol": "consumer",
                "group_remote_assignor": variant.strategy}
        super().__init__(bootstrap, group_id, [topic], [variant.strategy],
                         runtime=variant.runtime, report_records=True, **member_options)

    def add_member(self, *, name: str | None = None, **overrides: Any) -> int:
        if self.variant.client == "kafka-python":
            return super().add_member(name=name, **overrides)
        index = len(self._members)
        cfg = replace(self._template, name=name or f"m{index}", **overrides)
        view = MemberView(index=index, name=cfg.name, config=cfg)
        log_path = self.workdir / f"{cfg.name}.log"
        if self.variant.client == "java":
            proc = self._java()
            with self._cond:
                self._jvm_views[cfg.name] = view
            assert proc.stdin is not None
            proc.stdin.write(f"add {cfg.name}\n")
            proc.stdin.flush()
            log_path = self.workdir / "jvm.log"
            reader = self._jvm_reader
        else:
            with open(log_path, "w", encoding="utf-8") as log_file:
                proc = subprocess.Popen(
                    [sys.executable, "-u", "-m", "benchmarks._timing_members",
                     self.variant.client, cfg.to_json()],
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log_file,
                    text=True, encoding="utf-8", env=_child_env())
            view.pid = proc.pid
            reader = threading.Thread(target=self._read_events, args=(view, proc),
                                      daemon=True, name=f"group-{cfg.name}")
            reader.start()
        with self._cond:
            self._members.append(_Member(view, proc, log_path, reader))
        return index

    def _java(self) -> subprocess.Popen[str]:
        if self._jvm is None:
            t = self._template
            with open(self.workdir / "jvm.log", "w", encoding="utf-8") as log_file:
                self._jvm = subprocess.Popen(
                    ["java", "-Xss512k", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                     "-cp", java_classpath(), "RebalanceMember", t.bootstrap, t.group_id,
                     t.topics[0], t.strategies[0], str(t.revoke_delay_ms),
                     str(t.session_timeout_ms), str(t.heartbeat_interval_ms)],
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log_file,
                    text=True, encoding="utf-8")
            self._jvm_reader = threading.Thread(target=self._read_jvm, args=(self._jvm,),
                                                daemon=True, name="group-jvm")
            self._jvm_reader.start()
        return self._jvm

    def _read_jvm(self, proc: subprocess.Popen[str]) -> None:
        """Events of every JVM-hosted member, each applied to its member's view."""
        assert proc.stdout is not None
        for line in proc.stdout:
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue
            with self._cond:
                view = self._jvm_views.get(str(event.get("member")))
                if view is not None:
                    view.apply(event)
                    self._cond.notify_all()
        try:
            code: int | None = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            code = None
        with self._cond:
            for view in self._jvm_views.values():
                view.alive, view.exit_code = False, code
            self._cond.notify_all()


class BrokerWatch:
    """Polls the group through the admin API (DescribeGroups) from a thread, so every
    variant also has a join -> stable seen by the broker, whatever its client reports:
    ``stable_since(t0, members, partitions)`` is the first poll after ``t0`` at which the
    group is Stable with that many members and every partition assigned (a cooperative
    first round, which leaves the revoked partitions unassigned, does not count)."""

    def __init__(self, bootstrap: str, group_id: str, every: float = 0.05) -> None:
        from kafka.admin import KafkaAdminClient

        self._admin = KafkaAdminClient(bootstrap_servers=bootstrap.split(","),
                                       client_id="rebalance-timings-watch",
                                       request_timeout_ms=5_000)
        self._group, self._every = group_id, every
        #: (monotonic time of the answer, state, members, partitions assigned)
        self.samples: list[tuple[float, str, int, int]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="broker-watch")
        self._thread.start()

    def _run(self) -> None:
        import time

        while not self._stop.wait(self._every):
            try:
                info = self._admin.describe_groups([self._group])[self._group]
            except Exception:  # a missed sample is fine; the next one comes
                continue
            assigned = sum(len(tp["partitions"])
                           for m in info.get("members", [])
                           if isinstance(m.get("member_assignment"), dict)
                           for tp in m["member_assignment"].get("assigned_partitions", []))
            self.samples.append((time.monotonic(), str(info.get("group_state")),
                                 len(info.get("members", [])), assigned))

    def stable_since(self, t0: float, members: int, partitions: int) -> float:
        for t, state, n, assigned in self.samples:
            if t > t0 and state == "Stable" and n == members and assigned == partitions:
                return t
        return float("nan")

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
        with contextlib.suppress(Exception):
            self._admin.close()
