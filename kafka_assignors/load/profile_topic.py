"""Weights from a load profile published to a compacted topic.

``kafka-assignors profile --publish TOPIC`` writes one message per partition,
keyed ``topic:partition``, whose value is that partition's profile entry (see
:mod:`.profile`).  Compaction keeps the newest entry per key, so the topic is
the current profile; a message with no value (a tombstone) removes a
partition's entry.  The leader reads the topic from the start to its end at
every rebalance, with a short-lived consumer built from the group member's own
connection settings (:mod:`.connection`) and outside any group, bounded by
``timeout_s``.  Any failure - the topic missing, no entries, a bad entry,
no answer in time - raises, and the leader logs why and counts partitions.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Collection, Mapping
from typing import Any

from ..core.model import TopicPartition
from .connection import (
    WeightSourceError,
    bounded,
    client_config,
    helper_client,
    resolve_settings,
)
from .profile import LoadProfileError, parse_entries
from .sources import WeightContext

#: Most records one read of the profile topic looks at (a profile is one per partition).
MAX_RECORDS = 5_000_000


class ProfileTopic:
    """Weights = the newest load profile entry per partition in a compacted topic.

    ``consumer`` may give ``{"connection": {...}}`` explicitly (for clients
    whose coordinator cannot be found, e.g. aiokafka); ``consumer_factory``
    replaces ``kafka.KafkaConsumer`` (tests).
    """

    def __init__(
        self,
        topic: str,
        timeout_s: float = 5.0,
        *,
        consumer: Mapping[str, Any] | None = None,
        consumer_factory: Callable[..., Any] | None = None,
    ) -> None:
        if not topic:
            raise ValueError("topic must be a non-empty topic name")
        if timeout_s <= 0:
            raise ValueError("timeout_s must be positive")
        self.topic = topic
        self.timeout_s = timeout_s
        self.description = f"load profile topic {topic!r}"
        self._consumer = dict(consumer) if consumer is not None else None
        self._factory = consumer_factory

    def weights(
        self, partitions: Collection[TopicPartition], context: WeightContext
    ) -> Mapping[TopicPartition, float]:
        settings = resolve_settings(self._consumer, context)
        if not settings.get("connection"):
            raise WeightSourceError("the consumer's connection settings are unknown")
        factory, accepted = helper_client(self._factory, _consumer_class)
        config = client_config(settings["connection"], accepted, int(self.timeout_s * 1000),
                               "load-profile")
        config.update(group_id=None, enable_auto_commit=False, fetch_max_wait_ms=100)
        deadline = time.monotonic() + self.timeout_s
        entries = bounded(self.timeout_s, lambda: _read_topic(factory, config, self.topic,
                                                              deadline),
                          "kafka-assignors-profile-topic")
        return decode_entries(self.topic, entries)


def decode_entries(topic: str, latest: Mapping[bytes, bytes]) -> dict[TopicPartition, float]:
    """Weights from the newest value per key; errors name the topic and the key."""
    if not latest:
        raise WeightSourceError(f"profile topic {topic!r} holds no entries")
    values = []
    for key, raw in latest.items():
        try:
            values.append(json.loads(raw))
        except ValueError as exc:
            raise WeightSourceError(
                f"profile topic {topic!r}: the value of key {key!r} is not JSON: {exc}"
            ) from exc
    try:
        loads = parse_entries(values)
    except LoadProfileError as exc:
        raise WeightSourceError(f"profile topic {topic!r}: {exc}") from exc
    return {p.tp: p.weight for p in loads}


def _consumer_class() -> Any:
    from kafka import KafkaConsumer

    return KafkaConsumer


def _read_topic(factory: Callable[..., Any], config: Mapping[str, Any], topic: str,
                deadline: float) -> dict[bytes, bytes]:
    """The newest value per key, reading every partition of ``topic`` up to its end."""
    from kafka.structs import TopicPartition as KafkaTopicPartition

    consumer = factory(**config)
    try:
        numbers = consumer.partitions_for_topic(topic)
        if not numbers:
            raise WeightSourceError(f"profile topic {topic!r} does not exist")
        tps = [KafkaTopicPartition(topic, p) for p in sorted(numbers)]
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        ends = consumer.end_offsets(tps)
        latest: dict[bytes, bytes] = {}
        seen = 0
        while any(consumer.position(tp) < ends[tp] for tp in tps):
            left_ms = int((deadline - time.monotonic()) * 1000)
            if left_ms <= 0:
                raise WeightSourceError(f"profile topic {topic!r} not read to its end in time")
            for records in consumer.poll(timeout_ms=min(left_ms, 500)).values():
                for r in records:
                    seen += 1
                    if r.key is None:
                        continue  # not written by the pipeline: no partition to weigh
                    if r.value is None:
                        latest.pop(r.key, None)  # tombstone
                    else:
                        latest[r.key] = r.value
            if seen > MAX_RECORDS:
                raise WeightSourceError(
                    f"profile topic {topic!r} holds over {MAX_RECORDS:,} records; "
                    "is it compacted?"
                )
        return latest
    finally:
        consumer.close()
