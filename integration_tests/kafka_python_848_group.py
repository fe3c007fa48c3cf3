"""kafka-python members on the consumer group protocol (``group_protocol="consumer"``),
polled in turn from the test's thread, with what each read and held after every round.

One thread polls every member, so a snapshot of the assignments after a round is one
moment: two members holding a partition in the same snapshot is double ownership (a member
changes its assignment only inside its own ``poll()``).  Java members (:mod:`.java_848_member`)
run in a JVM of their own: a partition they provably held at some moment (a record read, a
listener's snapshot) must not be in a Python member's assignment between two of its polls
around that moment (``double_owned_with_java``).
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .broker_view import describe

if TYPE_CHECKING:
    from .java_848_member import JavaMembers

TP = tuple[str, int]


@dataclass
class Reads:
    """What one member read: (topic, partition, offset) -> how many times, and when."""

    records: dict[tuple[str, int, int], int] = field(default_factory=dict)
    by_partition_at: list[tuple[float, TP]] = field(default_factory=list)


class KafkaPythonGroup:
    """Members of one consumer-protocol group made by ``kafka_assignors.kafka_python``."""

    def __init__(self, bootstrap: str, group: str, **options: Any) -> None:
        self.bootstrap = bootstrap
        self.group_id = group
        self.options = {"group_protocol": "consumer", "auto_offset_reset": "earliest",
                        **options}
        self.members: dict[str, Any] = {}
        self.reads: dict[str, Reads] = {}
        self.double_owned: list[tuple[TP, list[str]]] = []
        self.held: dict[str, frozenset[TP]] = {}
        #: (since, until, member, assignment): a Python member held it from the end of one
        #: of its polls to the start of its next (``until`` is inf while it is the last)
        self.held_between: list[tuple[float, float, str, frozenset[TP]]] = []
        self.java: JavaMembers | None = None

    def join(self, name: str, topics: list[str], **options: Any) -> Any:
        from kafka_assignors.kafka_python import KafkaConsumer

        consumer = KafkaConsumer(*topics, bootstrap_servers=self.bootstrap,
                                 group_id=self.group_id, client_id=name,
                                 **{**self.options, **options})
        self.members[name] = consumer
        self.reads.setdefault(name, Reads())
        return consumer

    def join_confluent(self, name: str, topics: list[str], **conf: Any) -> Any:
        """A confluent-kafka member with ``group.protocol=consumer`` in the same group."""
        from confluent_kafka import Consumer

        consumer = Consumer({"bootstrap.servers": self.bootstrap, "group.id": self.group_id,
                             "client.id": name, "group.protocol": "consumer",
                             "auto.offset.reset": "earliest", **conf})
        consumer.subscribe(topics)
        self.members[name] = consumer
        self.reads.setdefault(name, Reads())
        return consumer

    def join_java(self, name: str, topic: str, assignor: str, log_dir: Path,
                  revoke_delay_ms: int = 1) -> None:
        """A Java consumer (``group.protocol=consumer``, ``group.remote.assignor``) in the
        same group, in the group's JVM (started with the first, which sets the assignor
        and how long a revocation callback takes for every Java member)."""
        from .java_848_member import JavaMembers

        if self.java is None:
            self.java = JavaMembers(self.bootstrap, self.group_id, topic, assignor, log_dir,
                                    revoke_delay_ms)
        self.java.add(name)

    def close(self, name: str) -> None:
        if self.java is not None and name in self.java.members():
            self.java.remove(name)
            return
        self.members.pop(name).close()
        self.held.pop(name, None)
        self._end_held(name, time.monotonic())

    def close_all(self) -> None:
        for name in list(self.members):
            try:
                self.close(name)
            except Exception:  # closing the rest matters more
                self.members.pop(name, None)
        if self.java is not None:
            self.java.close()

    def _end_held(self, name: str, at: float) -> None:
        for i in range(len(self.held_between) - 1, -1, -1):
            since, until, who, tps = self.held_between[i]
            if who == name:
                if until == float("inf"):
                    self.held_between[i] = (since, at, who, tps)
                return

    def all_held(self) -> dict[str, frozenset[TP]]:
        """The Python members' assignments after the last round and the Java members' last
        reported ones."""
        java = self.java.members() if self.java is not None else {}
        return {**self.held, **java}

    def double_owned_with_java(self) -> list[tuple[float, TP, str, str]]:
        """(time, partition, Java member, Python member) where a Java member provably held a
        partition while a Python member held it between two of its polls."""
        if self.java is None:
            return []
        by_member: dict[str, list[tuple[float, float, frozenset[TP]]]] = {}
        for since, until, name, held in self.held_between:  # each member's in time order
            by_member.setdefault(name, []).append((since, until, held))
        starts = {name: [since for since, _, _ in spans] for name, spans in by_member.items()}
        found: list[tuple[float, TP, str, str]] = []
        for at, java_name, tps in self.java.held_at():
            for name, spans in by_member.items():
                i = bisect.bisect_right(starts[name], at) - 1
                if i >= 0 and at <= spans[i][1]:
                    found.extend((at, tp, java_name, name) for tp in tps & spans[i][2])
        return found

    def poll_round(self, timeout_ms: int = 50, skip: frozenset[str] = frozenset()) -> None:
        """Poll every member once (except ``skip``); record reads and check ownership."""
        now = time.monotonic()
        for name, consumer in self.members.items():
            if name in skip:
                continue
            reads = self.reads[name]
            self._end_held(name, time.monotonic())
            for tp, offsets in _poll(consumer, timeout_ms).items():
                for offset in offsets:
                    key = (*tp, offset)
                    reads.records[key] = reads.records.get(key, 0) + 1
                if offsets:
                    reads.by_partition_at.append((now, tp))
            self.held[name] = frozenset((tp.topic, tp.partition)
                                        for tp in consumer.assignment())
            self.held_between.append((time.monotonic(), float("inf"), name, self.held[name]))
        owners: dict[TP, list[str]] = {}
        for name, tps in self.held.items():
            for tp in tps:
                owners.setdefault(tp, []).append(name)
        self.double_owned.extend((tp, names) for tp, names in owners.items()
                                 if len(names) > 1)

    def stable(self, total: int, timeout: float = 60.0,
               skip: frozenset[str] = frozenset()) -> dict[str, frozenset[TP]]:
        """Poll until the broker calls the group Stable, every member's own view is the
        broker's, and every partition is held once."""
        from confluent_kafka.admin import AdminClient

        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        deadline = time.monotonic() + timeout
        problem = "not described yet"
        while time.monotonic() < deadline:
            self.poll_round(skip=skip)
            view = describe(admin, self.group_id)
            now = self.all_held()
            held = [tp for tps in now.values() for tp in tps]
            if isinstance(view, str):
                problem = view
            elif not view.stable or view.members != now:
                problem = f"state {view.state}, broker {view.members}, members {now}"
            elif len(held) != total or len(set(held)) != total:
                problem = f"not every partition held once: {now}"
            else:
                return now
        pytest.fail(f"no stable complete assignment in {timeout} s: {problem}")

    def drain(self, acked: set[TP] | Callable[[], set[tuple[str, int, int]]],
              timeout: float = 30.0) -> None:
        """Poll until every record in ``acked()`` was read by someone (or the timeout)."""
        assert callable(acked)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not acked() <= self.all_read():
            self.poll_round()

    def _records(self) -> list[dict[tuple[str, int, int], int]]:
        java = list(self.java.read().values()) if self.java is not None else []
        return [reads.records for reads in self.reads.values()] + java

    def all_read(self) -> set[tuple[str, int, int]]:
        return {key for records in self._records() for key in records}

    def read_twice(self) -> int:
        """Records read more than once, by one member or by two."""
        count: dict[tuple[str, int, int], int] = {}
        for records in self._records():
            for key, n in records.items():
                count[key] = count.get(key, 0) + n
        return sum(1 for n in count.values() if n > 1)


def _poll(consumer: Any, timeout_ms: int) -> dict[TP, list[int]]:
    """One poll of a kafka-python or a confluent-kafka consumer: offsets read by partition."""
    out: dict[TP, list[int]] = {}
    if hasattr(consumer, "consume"):  # confluent-kafka
        for msg in consumer.consume(500, timeout_ms / 1000):
            if msg.error() is None:
                out.setdefault((msg.topic(), msg.partition()), []).append(msg.offset())
        return out
    for tp, records in consumer.poll(timeout_ms=timeout_ms).items():
        out[(tp.topic, tp.partition)] = [r.offset for r in records]
    return out
