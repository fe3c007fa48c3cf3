"""The look-up the test producers use for records acknowledged without an offset."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from kafka_assignors.embedded.admin import create_topic, delete_topic

from .unknown_offsets import NotInLog, resolve, resolve_delivered


def test_values_are_found_at_the_offsets_the_broker_reported(kafka_broker: Any) -> None:
    from confluent_kafka import Producer

    topic = f"unknown-offsets-{uuid.uuid4().hex[:8]}"
    create_topic(kafka_broker.bootstrap, topic, partitions=3)
    try:
        by_value: dict[bytes, tuple[str, int, int]] = {}

        def delivered(err: Any, msg: Any) -> None:
            assert err is None
            by_value[msg.value()] = (msg.topic(), msg.partition(), msg.offset())

        producer = Producer({"bootstrap.servers": kafka_broker.bootstrap,
                             "enable.idempotence": True})
        for n in range(60):
            producer.produce(topic, value=str(n).encode(), partition=n % 3,
                             on_delivery=delivered)
        assert producer.flush(30) == 0
        some = [str(n).encode() for n in range(0, 60, 7)]
        found = resolve(kafka_broker.bootstrap, [(topic, p) for p in range(3)], some)
        assert found == {v: by_value[v] for v in some}
        # a value that is not there is told apart from one not found in time: partition 0
        # is read to its end, what was found is kept, and the missing value is named
        with pytest.raises(NotInLog, match="1 acknowledged records not found") as gap:
            resolve(kafka_broker.bootstrap, [(topic, 0)], [b"never written", b"0"])
        assert gap.value.missing == {b"never written"}
        assert gap.value.found == {b"0": by_value[b"0"]}
        # the test producers' form: what is there, and how many are not
        assert resolve_delivered(kafka_broker.bootstrap, [(topic, 0)],
                                 [b"never written", b"0"], "this test") == (
            {b"0": by_value[b"0"]}, 1)
    finally:
        delete_topic(kafka_broker.bootstrap, topic)
