"""kafka-python members on the consumer group protocol (``group_protocol="consumer"``),
polled in turn from the test's thread, with what each read and held after every round.

One thread polls every member, so a snapshot of the assignments after a round is one
moment: two members holding a partition in the same snapshot is double ownership (a member
changes its assignment only inside its own ``poll()``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from .broker_view import describe

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

    def close(self, name: str) -> None:
        self.members.pop(name).close()
        self.held.pop(name, None)

    def close_all(self) -> None:
        for name in list(self.members):
            try:
                self.close(name)
            except Exception:  # closing the rest matters more
                self.members.pop(name, None)

    def poll_round(self, timeout_ms: int = 50, skip: frozenset[str] = frozenset()) -> None:
        """Poll every member once (except ``skip``); record reads and check ownership."""
        now = time.monotonic()
        for name, consumer in self.members.items():
            if name in skip:
                continue
            reads = self.reads[name]
            for tp, offsets in _poll(consumer, timeout_ms).items():
                for offset in offsets:
                    key = (*tp, offset)
                    reads.records[key] = reads.records.get(key, 0) + 1
                if offsets:
                    reads.by_partition_at.append((now, tp))
            self.held[name] = frozenset((tp.topic, tp.partition)
                                        for tp in consumer.assignment())
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
            held = [tp for tps in self.held.values() for tp in tps]
            if isinstance(view, str):
                problem = view
            elif not view.stable or view.members != self.held:
                problem = f"state {view.state}, broker {view.members}, members {self.held}"
            elif len(held) != total or len(set(held)) != total:
                problem = f"not every partition held once: {self.held}"
            else:
                return dict(self.held)
        pytest.fail(f"no stable complete assignment in {timeout} s: {problem}")

    def drain(self, acked: set[TP] | Callable[[], set[tuple[str, int, int]]],
              timeout: float = 30.0) -> None:
        """Poll until every record in ``acked()`` was read by someone (or the timeout)."""
        assert callable(acked)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not acked() <= self.all_read():
            self.poll_round()

    def all_read(self) -> set[tuple[str, int, int]]:
        return {key for reads in self.reads.values() for key in reads.records}

    def read_twice(self) -> int:
        """Records read more than once, by one member or by two."""
        count: dict[tuple[str, int, int], int] = {}
        for reads in self.reads.values():
            for key, n in reads.records.items():
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
