"""Offsets of acknowledged records whose delivery report carried none.

An idempotent librdkafka producer can report a record delivered with no offset
(``msg.offset()`` is None): a retried batch the broker had already written is answered as a
duplicate, and the original offset is not in that answer. It happened under load in CI. The
record is in the log all the same, so a test that tracks records by offset looks it up there
by its value (every test producer writes unique values) instead of crashing or miscounting.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable


def resolve(bootstrap: str, partitions: Iterable[tuple[str, int]], values: Iterable[bytes],
            timeout: float = 30.0) -> set[tuple[str, int, int]]:
    """(topic, partition, offset) of each of ``values`` (unique), read back from ``partitions``;
    raises AssertionError if one is not found within ``timeout`` (the test must not guess)."""
    from confluent_kafka import Consumer, TopicPartition

    wanted = set(values)
    if not wanted:
        return set()
    found: set[tuple[str, int, int]] = set()
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"resolve-{uuid.uuid4()}",
                         "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    try:
        consumer.assign([TopicPartition(t, p, 0) for t, p in set(partitions)])
        deadline = time.monotonic() + timeout
        while wanted and time.monotonic() < deadline:
            for msg in consumer.consume(500, 0.5):
                topic, partition, offset = msg.topic(), msg.partition(), msg.offset()
                if (msg.error() is None and msg.value() in wanted and topic is not None
                        and partition is not None and offset is not None):
                    wanted.discard(msg.value())
                    found.add((topic, partition, offset))
    finally:
        consumer.close()
    assert not wanted, f"{len(wanted)} acknowledged records not found in {sorted(partitions)}"
    return found
