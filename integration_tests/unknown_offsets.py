"""Offsets of acknowledged records whose delivery report carried none.

An idempotent producer can report a record delivered with no offset (librdkafka:
``msg.offset()`` None; kafka-python: ``RecordMetadata.offset`` -1): a retried batch the broker
had already written is answered DUPLICATE_SEQUENCE_NUMBER, which both clients count as
delivered, and the original offset is not in that answer. It happened under load in CI. The
record is in the log all the same, so a test that tracks records by offset looks it up there
by its value (every test producer writes unique values) instead of crashing or miscounting.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable


def resolve(bootstrap: str, partitions: Iterable[tuple[str, int]], values: Iterable[bytes],
            timeout: float = 30.0) -> dict[bytes, tuple[str, int, int]]:
    """value -> (topic, partition, offset) for each of ``values`` (unique), read back from
    ``partitions``;
    raises AssertionError if one is not found within ``timeout`` (the test must not guess)."""
    from confluent_kafka import Consumer, TopicPartition

    wanted = set(values)
    found: dict[bytes, tuple[str, int, int]] = {}
    if not wanted:
        return found
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"resolve-{uuid.uuid4()}",
                         "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    try:
        consumer.assign([TopicPartition(t, p, 0) for t, p in set(partitions)])
        deadline = time.monotonic() + timeout
        while wanted and time.monotonic() < deadline:
            for msg in consumer.consume(500, 0.5):
                value, topic, partition, offset = (msg.value(), msg.topic(), msg.partition(),
                                                   msg.offset())
                if (msg.error() is None and value in wanted and topic is not None
                        and partition is not None and offset is not None):
                    wanted.discard(value)
                    found[value] = (topic, partition, offset)
    finally:
        consumer.close()
    assert not wanted, f"{len(wanted)} acknowledged records not found in {sorted(partitions)}"
    return found
